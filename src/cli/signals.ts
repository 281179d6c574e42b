/** Resolves on the first SIGINT or SIGTERM (then no longer listens): the end of a long-running subcommand. */
export function untilStopSignal(): Promise<void> {
  return new Promise<void>((resolveStop) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
