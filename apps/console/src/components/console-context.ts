import type { PlantStoreClient } from '@plant-store/client';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export interface ConsoleContextValue {
  readonly client: PlantStoreClient;
  /** The token was refused (expired, revoked): back to sign-in, saying why. */
  readonly onTokenRefused: (message: string) => void;
}

export const ConsoleContext = createContext<ConsoleContextValue | null>(null);

export function useConsole(): ConsoleContextValue {
  const value = useContext(ConsoleContext);
  if (value === null) throw new Error('useConsole outside the signed-in console');
  return value;
}
