import * as v from 'valibot';
import { int64Schema } from './int64.js';
import { objectMessage, textSchema } from './text.js';

export const NAME_MAX_LENGTH = 255;
export const TAG_MAX_LENGTH = 255;

/** A tag: absent, or a string of at most 255 characters (never null). */
export function tagSchema(description: string) {
  return textSchema('tag', 0, TAG_MAX_LENGTH, description);
}

const plantEntries = {
  /** The name of the plant: 1 to 255 characters. */
  name: textSchema('name', 1, NAME_MAX_LENGTH, 'The name of the plant'),
  /** Tag that specifies the type of the plant: absent, or at most 255 characters (never null). */
  tag: v.exactOptional(tagSchema('Tag that specifies the type of the plant')),
};

/** The spec's base plant record: `{ name, tag? }`. Unknown keys are stripped. */
export const PlantSchema = v.object(plantEntries, objectMessage);
export type Plant = v.InferOutput<typeof PlantSchema>;

/** The body of `POST /plants`: a Plant plus the client-chosen int64 `id`. */
const idEntry = {
  /** Identification number of the plant: an int64, chosen by the client. */
  id: int64Schema('id', 'Identification number of the plant'),
};

export const NewPlantSchema = v.object({ ...idEntry, ...plantEntries }, objectMessage);
export type NewPlant = v.InferOutput<typeof NewPlantSchema>;
/** What a NewPlant may look like before parsing: `id` as bigint or safe-integer number. */
export type NewPlantInput = v.InferInput<typeof NewPlantSchema>;

/**
 * A plant as the store holds and answers it: `{ id, name, tag? }`, the spec's Plant plus its
 * id so that callers can fetch or delete it. Same shape as NewPlant; a schema of its own so
 * that documents generated from these schemas can name it.
 */
export const StoredPlantSchema = v.object({ ...idEntry, ...plantEntries }, objectMessage);
export type StoredPlant = v.InferOutput<typeof StoredPlantSchema>;

/** The path id of `/plants/{id}`, once read from the path as an integer. */
export const PlantIdSchema = int64Schema('id', 'The id of the plant');

/**
 * The body of `PATCH /plants/{id}`: a JSON merge patch (RFC 7396) of `name` and `tag`. A field
 * absent is kept; `"tag": null` removes the tag (`"name": null` is refused: a plant has a name).
 * `id`, when sent, must be the path's: it cannot change. Unknown keys are ignored, as on create.
 */
export const PlantPatchSchema = v.object(
  {
    id: v.exactOptional(int64Schema('id', "The plant's id, when sent: it must be the path's (an id cannot change)")),
    name: v.exactOptional(textSchema('name', 1, NAME_MAX_LENGTH, 'The new name: 1 to 255 characters')),
    tag: v.exactOptional(v.nullable(tagSchema('The new tag: at most 255 characters; null removes it'))),
  },
  objectMessage,
);
export type PlantPatch = v.InferOutput<typeof PlantPatchSchema>;
export type PlantPatchInput = v.InferInput<typeof PlantPatchSchema>;
