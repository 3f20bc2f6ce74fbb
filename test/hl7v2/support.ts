import { readFileSync, readdirSync } from 'node:fs';
import { fixturePath, readFixture } from '../support/fixtures.ts';

/** Every HL7 v2 fixture: path relative to test/fixtures, and its bytes. */
export function hl7v2Fixtures(): { name: string; bytes: Buffer }[] {
  const dirs = ['hl7v2/microsoft-FHIR-Converter', 'hl7v2/oehf-ipf', 'hl7v2/LinuxForHealth-hl7v2-fhir-converter', 'hl7v3/ipf/v2'];
  return dirs.flatMap((dir) =>
    readdirSync(fixturePath(dir))
      .filter((file) => file.endsWith('.hl7'))
      .sort()
      .map((file) => ({ name: `${dir}/${file}`, bytes: readFileSync(fixturePath(`${dir}/${file}`)) })),
  );
}

export const fixture = readFixture;

let counter = 0;
/** A synthetic message with CR terminators and a unique control id unless one is given. */
export function message(segments: string[], options: { controlId?: string; type?: string; sender?: string } = {}): Buffer {
  const controlId = options.controlId ?? `T${process.pid}-${Date.now()}-${++counter}`;
  const msh = `MSH|^~\\&|${options.sender ?? 'LAB'}|HOSP|GATEWAY|SITE|20240102030405+0100||${options.type ?? 'ADT^A01^ADT_A01'}|${controlId}|P|2.5.1`;
  return Buffer.from([msh, ...segments].join('\r'), 'utf8');
}
