/** The one polling wait of the project's tests, kept beside the database's test support. */
export { waitUntil } from '@plant-store/db/testing';
