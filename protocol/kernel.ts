// The kernel RPC contract as TypeScript, all of it generated from kernel-rpc.schema.json by scripts/build.mjs
// (the one declaration both sides check against): the message types, the method map and the error codes.
import type { KernelNotificationNames } from '../build/generated/kernel-protocol';
import type { KernelMethods } from '../build/generated/kernel-protocol';

export type * from '../build/generated/kernel-rpc';
export { KernelErrorCode, type KernelMethods } from '../build/generated/kernel-protocol';

export type KernelMethod = keyof KernelMethods;

/** The notifications the client listens to, checked against the schema's names. */
export const KernelNotifications = {
  progress: '$/progress',
  log: 'kernel/log',
} as const satisfies Record<string, (typeof KernelNotificationNames)[number]>;
