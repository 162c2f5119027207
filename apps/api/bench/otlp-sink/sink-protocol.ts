/** Messages between the bench and its OTLP sink process (Node IPC, JSON-serialisable). */

/** The sink listens. */
export interface SinkReady {
  readonly type: 'ready';
  readonly port: number;
}

/** Bench to sink: say what you have received so far. */
export interface SinkCountRequest {
  readonly type: 'count';
}

/** What the sink has received since it started. */
export interface SinkCounts {
  readonly type: 'counts';
  /** OTLP export requests (POSTs). */
  readonly requests: number;
  readonly bytes: number;
  /** Spans in them, counted in the protobuf. */
  readonly spans: number;
  /** Bodies that were not OTLP protobuf as expected. */
  readonly unreadable: number;
}
