/** The part of composeverter (which ships no types) used here. */
declare module 'composeverter' {
  export interface ComposeValidationError {
    readonly line: number;
    readonly message: string;
    readonly helpLink?: string;
  }
  /** Errors against the Compose Specification's JSON schema; empty when the file is valid. */
  function validateDockerComposeToCommonSpec(content: string): ComposeValidationError[];
  const composeverter: { readonly validateDockerComposeToCommonSpec: typeof validateDockerComposeToCommonSpec };
  export default composeverter;
}
