/** True when a process with this pid exists (signal 0 checks without signalling). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user (PostgreSQL running as "postgres").
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
