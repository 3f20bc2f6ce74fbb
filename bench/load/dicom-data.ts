import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { progress } from '../lib/log.ts';

const run = promisify(execFile);

/**
 * Synthetic DICOM test sets (no real patient data), written by dcmtk's dump2dcm from a text
 * dump, as the shared dicom-ingest-bench.sh does: CT Image Storage instances of 256x256x16 bit
 * (about 130 KB) and Multi-frame Grayscale Word Secondary Capture instances of 512x512x16 bit
 * with 20-60 frames (10-30 MB), Explicit VR Little Endian. Sets are cached under the work dir.
 */
export interface DicomSet {
  name: string;
  dir: string;
  files: string[];
  bytes: number;
}

interface InstanceSpec {
  sopClass: string;
  study: string;
  series: string;
  sop: string;
  patientId: string;
  patientName: string;
  studyNumber: number;
  instanceNumber: number;
  rows: number;
  columns: number;
  frames: number;
  pixelFile: string;
  accession: string;
}

const ctImageStorage = '1.2.840.10008.5.1.4.1.1.2';
// PS3.4 B.5: Multi-frame Grayscale Word Secondary Capture Image Storage.
const multiFrameWordSc = '1.2.840.10008.5.1.4.1.1.7.3';

function uidRoot(): string {
  // PS3.5 B.2: a UUID-derived UID under the 2.25 root needs no registered organisation root.
  return `2.25.${BigInt(`0x${randomUUID().replace(/-/g, '')}`).toString()}`;
}

function dump(spec: InstanceSpec): string {
  const multiFrame = spec.frames > 1 ? `(0028,0008) IS [${spec.frames}]\n(0028,0009) AT (0018,1063)\n(0018,1063) DS [33.3]\n` : '';
  return `(0008,0005) CS [ISO_IR 100]
(0008,0016) UI [${spec.sopClass}]
(0008,0018) UI [${spec.sop}]
(0008,0020) DA [20240101]
(0008,0030) TM [120000]
(0008,0050) SH [${spec.accession}]
(0008,0060) CS [CT]
(0008,0064) CS [WSD]
(0008,0070) LO [SYNTHETIC]
(0008,1030) LO [BENCH STUDY ${spec.studyNumber}]
(0010,0010) PN [${spec.patientName}]
(0010,0020) LO [${spec.patientId}]
(0010,0030) DA [19700101]
(0010,0040) CS [O]
(0018,0050) DS [1.0]
(0020,000d) UI [${spec.study}]
(0020,000e) UI [${spec.series}]
(0020,0010) SH [${spec.studyNumber}]
(0020,0011) IS [1]
(0020,0013) IS [${spec.instanceNumber}]
(0020,0032) DS [0\\0\\${spec.instanceNumber}]
(0020,0037) DS [1\\0\\0\\0\\1\\0]
(0028,0002) US 1
(0028,0004) CS [MONOCHROME2]
${multiFrame}(0028,0010) US ${spec.rows}
(0028,0011) US ${spec.columns}
(0028,0030) DS [0.5\\0.5]
(0028,0100) US 16
(0028,0101) US 16
(0028,0102) US 15
(0028,0103) US 0
(0028,1052) DS [-1024]
(0028,1053) DS [1]
(7fe0,0010) OW =${spec.pixelFile}
`;
}

async function writeInstance(out: string, spec: InstanceSpec): Promise<void> {
  writeFileSync(`${out}.txt`, dump(spec));
  // +te: write Explicit VR Little Endian, the transfer syntax every SCP here accepts.
  await run('dump2dcm', ['-q', '+te', `${out}.txt`, out]);
  rmSync(`${out}.txt`);
}

function randomFile(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  const chunk = 4 * 1024 * 1024;
  for (let written = 0; written < bytes; written += chunk) writeSync(fd, randomBytes(Math.min(chunk, bytes - written)));
  closeSync(fd);
}

function describe(name: string, dir: string): DicomSet {
  const files = readdirSync(dir).filter((file) => file.endsWith('.dcm')).sort().map((file) => join(dir, file));
  return { name, dir, files, bytes: files.reduce((sum, file) => sum + statSync(file).size, 0) };
}

async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** `count` single-frame CT instances: 5 patients x 2 studies x 1 series. */
export async function smallSet(workDir: string, count: number): Promise<DicomSet> {
  const dir = join(workDir, `small-${count}`);
  if (existsSync(join(dir, '.complete'))) return describe('small', dir);
  progress(`generating ${count} small DICOM instances in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const root = uidRoot();
  const pixels = join(dir, '.pixels.raw');
  randomFile(pixels, 256 * 256 * 2);
  const perStudy = Math.ceil(count / 10);
  const specs: { out: string; spec: InstanceSpec }[] = [];
  for (let n = 0; n < count; n++) {
    const study = Math.floor(n / perStudy) + 1;
    const patient = Math.ceil(study / 2);
    const i = (n % perStudy) + 1;
    specs.push({
      out: join(dir, `s${String(study).padStart(2, '0')}_${String(i).padStart(4, '0')}.dcm`),
      spec: {
        sopClass: ctImageStorage, study: `${root}.1.${study}`, series: `${root}.1.${study}.1`, sop: `${root}.1.${study}.1.${i}`,
        patientId: `BENCH-P${patient}`, patientName: `BENCH^SMALL^P${patient}`, studyNumber: study, instanceNumber: i,
        rows: 256, columns: 256, frames: 1, pixelFile: pixels, accession: `ACC-S${study}`,
      },
    });
  }
  await inParallel(specs, 4, ({ out, spec }) => writeInstance(out, spec));
  rmSync(pixels);
  writeFileSync(join(dir, '.complete'), '');
  return describe('small', dir);
}

/** Multi-frame instances of 512x512x16 bit, `frames[i % frames.length]` frames each: 4 patients, 1 study each. */
export async function largeSet(workDir: string, name: string, count: number, frames: number[]): Promise<DicomSet> {
  const dir = join(workDir, `${name}-${count}-${frames.join('_')}`);
  if (existsSync(join(dir, '.complete'))) return describe(name, dir);
  progress(`generating ${count} ${name} DICOM instances (${frames.join('/')} frames of 512x512x16 bit) in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const root = uidRoot();
  const frameBytes = 512 * 512 * 2;
  for (const f of new Set(frames)) randomFile(join(dir, `.pixels-${f}.raw`), frameBytes * f);
  for (let n = 1; n <= count; n++) {
    const patient = ((n - 1) % 4) + 1;
    const f = frames[(n - 1) % frames.length]!;
    await writeInstance(join(dir, `l${patient}_${String(n).padStart(3, '0')}.dcm`), {
      sopClass: multiFrameWordSc, study: `${root}.2.${patient}`, series: `${root}.2.${patient}.1`, sop: `${root}.2.${patient}.1.${n}`,
      patientId: `BENCH-L${patient}`, patientName: `BENCH^LARGE^L${patient}`, studyNumber: 100 + patient, instanceNumber: n,
      rows: 512, columns: 512, frames: f, pixelFile: join(dir, `.pixels-${f}.raw`), accession: `ACC-L${patient}`,
    });
  }
  for (const f of new Set(frames)) rmSync(join(dir, `.pixels-${f}.raw`));
  writeFileSync(join(dir, '.complete'), '');
  return describe(name, dir);
}
