/** A plant id as typed: a decimal int64, read exactly (never through a JS number); null when it is none. */
export function readPlantId(text: string): bigint | null {
  const trimmed = text.trim();
  if (!/^-?\d{1,19}$/.test(trimmed)) return null;
  const id = BigInt(trimmed);
  return id >= -(2n ** 63n) && id < 2n ** 63n ? id : null;
}

export const PLANT_ID_HINT = 'an integer between -9223372036854775808 and 9223372036854775807';
