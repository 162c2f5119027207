import * as v from 'valibot';
import { objectMessage } from './text.js';

/** The answer of `GET /version`: which release of the service answers. */
export const ServiceVersionSchema = v.object(
  {
    version: v.pipe(v.string('version must be a string'), v.description("The service's release (semver)")),
  },
  objectMessage,
);
export type ServiceVersion = v.InferOutput<typeof ServiceVersionSchema>;
