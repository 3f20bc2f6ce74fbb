import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { progress } from './log.ts';

/**
 * The bench's own setup (issue 8: installing Orthanc and dcmtk through apt is part of it):
 * the Debian packages are installed when a tool is missing and the bench runs as root.
 */
const tools: { command: string; probe: string[]; pkg: string }[] = [
  { command: 'storescu', probe: ['--version'], pkg: 'dcmtk' },
  { command: 'dump2dcm', probe: ['--version'], pkg: 'dcmtk' },
  { command: 'echoscu', probe: ['--version'], pkg: 'dcmtk' },
  { command: 'Orthanc', probe: ['--version'], pkg: 'orthanc' },
  { command: 'curl', probe: ['--version'], pkg: 'curl' },
];

function present(command: string, probe: string[]): boolean {
  return !spawnSync(command, probe, { stdio: 'ignore' }).error;
}

export function ensureDicomTools(): string[] {
  const missing = [...new Set(tools.filter((tool) => !present(tool.command, tool.probe)).map((tool) => tool.pkg))];
  if (missing.length === 0) return [];
  if (userInfo().uid !== 0) return missing;
  progress(`installing ${missing.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let result = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  if (result.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    result = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  }
  return [...new Set(tools.filter((tool) => !present(tool.command, tool.probe)).map((tool) => tool.pkg))];
}
