/** Progress goes to stderr so that stdout stays free for the final summary. */
export function progress(message: string): void {
  const time = new Date().toISOString().slice(11, 19);
  process.stderr.write(`[bench ${time}] ${message}\n`);
}
