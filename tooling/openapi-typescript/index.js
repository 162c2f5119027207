// openapi-typescript builds its output with TypeScript's JS API (its peer dependency). The
// workspace's TypeScript 7 is a native compiler without that API, and a peer resolves from the
// package that depends on it: so openapi-typescript is a dependency of this package, whose own
// TypeScript is the 5 it needs (pnpm-workspace.yaml, catalog openapi-typescript-peer).
export * from 'openapi-typescript';
export { default } from 'openapi-typescript';
