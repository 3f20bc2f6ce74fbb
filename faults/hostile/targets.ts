import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { repositoryRoot } from '../harness/gateway-process.ts';
import type { Random } from './mutate.ts';
import { dicomDatasetSeeds, dicomPduSeeds, fhirBodySeeds, fhirSearchSeeds, hl7v2Seeds, hl7v3Seeds, mllpSeeds, mppsSeeds, type DatasetSeed } from './corpus.ts';

/**
 * The parsers of every surface, called in-process for volume. The modules are loaded by path at
 * run time (not imported statically) so that the campaign reports a parser that moved or changed
 * shape as a failed target instead of breaking the type-check of the whole tree.
 *
 * `acceptable` says which errors are the parser's documented way of refusing input (the surface
 * turns them into a 4xx, an AE/AR acknowledgement, an A-ABORT or a DIMSE failure status). Any
 * other exception (TypeError, RangeError...) is a crash: in a request handler it would be a 500.
 */
export interface FuzzTarget {
  name: string;
  seeds(): Buffer[];
  tokens: string[];
  /** Builds the function that feeds one input to the parser. */
  setup(): Promise<(input: Buffer, random: Random) => unknown>;
  acceptable(error: unknown): boolean;
}

async function load(path: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(join(repositoryRoot, path)).href)) as Record<string, unknown>;
}

function exported<T>(module: Record<string, unknown>, name: string, path: string): T {
  const value = module[name];
  if (value === undefined) throw new Error(`${path} no longer exports ${name}`);
  return value as T;
}

const named = (...names: string[]) => (error: unknown) => error instanceof Error && names.includes(error.name || error.constructor.name) || names.includes((error as object)?.constructor?.name);

const hl7Tokens = ['|', '^', '~', '\\', '&', '\r', '\n', '\r\n', '\\X41\\', '\\X\\', '\\F\\', '\\E\\', '\\.br\\', '\\Xzz\\', 'MSH|^~\\&|', 'PID|', 'OBX|1|NM|', 'MRG|', '\u00ef\u00bb\u00bf', '\u00c4', '99999999999999999999', '-1', '""', 'UNICODE UTF-8', '8859/1', 'ISO IR87', '\x00', '\x0b', '\x1c\r'];
const xmlTokens = ['<', '>', '</', '/>', '&amp;', '&#x0;', '&#1114112;', '&lt;', '<!DOCTYPE a [<!ENTITY x "y">]>', '<!ENTITY e SYSTEM "file:///etc/passwd">', '&e;', '<![CDATA[', ']]>', '<?xml version="1.0" encoding="UTF-16"?>', ' xmlns="urn:hl7-org:v3"', ' xmlns:x="', ' root="', ' extension="', '<id root="1.2"/>', '\u00ff\u00fe', '<a>'.repeat(50)];
const jsonTokens = ['{', '}', '[', ']', ',', ':', '"', '\\u0000', '\\ud800', 'null', 'true', '1e999', '-0', '12345678901234567890', '"resourceType":"Patient"', '"id":"../../x"', '"reference":"Patient/00000000-0000-0000-0000-000000000000"', '"__proto__":{"x":1}', '"constructor":{"prototype":{}}', '[[[[[[[[[[[[[[[[[[[[', '{"a":'.repeat(40)];
const searchTokens = ['&', '=', ',', '|', '$', ':', '%', '%00', '%zz', 'eq', 'ge2020', 'lt', '_count=', '_count=-1', '_count=99999999999', '_sort=', '_total=', '_page=', '_id=', 'patient=Patient/', 'identifier=|', 'birthdate=2020-13-45', 'name=%25', 'code=http://loinc.org|', ':missing=true', ':exact=', '.', '[]', '\u00e9'];
const pduTokens = ['\x01\x00\x00\x00\x00\x44', '\x04\x00\x00\x00\x00\x00', '\x05\x00\x00\x00\x00\x04', '\x07\x00\x00\x00\x00\x04', '\x10\x00\x00\x15', '\x20\x00', '\x30\x00', '\x40\x00', '\x50\x00', '\x51\x00\x00\x04', '\xff\xff\xff\xff', '\x00\x00\x00\x00', '1.2.840.10008.1.2', '1.2.840.10008.3.1.1.1'];
const datasetTokens = ['\xfe\xff\x00\xe0', '\xfe\xff\x0d\xe0', '\xfe\xff\xdd\xe0', '\xff\xff\xff\xff', 'SQ\x00\x00', 'OB\x00\x00', 'UN\x00\x00', 'UT\x00\x00', '\x08\x00\x05\x00', '\x10\x00\x10\x00', '\x7f\xe0\x10\x00', '\x00\x00\x00\x80'];

export const fuzzTargets: FuzzTarget[] = [
  {
    name: 'HL7 v2 ER7 (parse and message plan)',
    seeds: hl7v2Seeds,
    tokens: hl7Tokens,
    async setup() {
      const parseModule = await load('src/hl7v2/er7/parse.ts');
      const planModule = await load('src/hl7v2/intake/plan.ts');
      const parseEr7 = exported<(input: Uint8Array, options: { defaultCharset: string; maxBytes: number }) => { message?: unknown }>(parseModule, 'parseEr7', 'src/hl7v2/er7/parse.ts');
      const planMessage = exported<(message: unknown) => unknown>(planModule, 'planMessage', 'src/hl7v2/intake/plan.ts');
      return (input, random) => {
        const result = parseEr7(input, { defaultCharset: random.pick(['ASCII', '8859/1', 'UNICODE UTF-8']), maxBytes: 1024 * 1024 });
        if (result.message) planMessage(result.message);
      };
    },
    // parseEr7 and planMessage report problems in their result; they have no error to throw.
    acceptable: () => false,
  },
  {
    name: 'MLLP framing (frame scanner, random TCP segmentation)',
    seeds: mllpSeeds,
    tokens: ['\x0b', '\x1c', '\r', '\x1c\r', '\x0b\x1c\r', '\x0b'.repeat(10), 'MSH|^~\\&|'],
    async setup() {
      const module = await load('src/hl7v2/mllp/frame-scanner.ts');
      const FrameScanner = exported<new (options: { maxFrameBytes: number; headBytes?: number }) => { push(data: Buffer): unknown[] }>(module, 'FrameScanner', 'src/hl7v2/mllp/frame-scanner.ts');
      return (input, random) => {
        const scanner = new FrameScanner({ maxFrameBytes: 4096 + random.int(64 * 1024), headBytes: 1024 });
        for (let offset = 0; offset < input.length; ) {
          const size = 1 + random.int(random.next() < 0.5 ? 16 : 4096);
          scanner.push(input.subarray(offset, offset + size));
          offset += size;
        }
      };
    },
    acceptable: () => false,
  },
  {
    name: 'HL7 v3 XML (safe parser, envelope, patient command)',
    seeds: hl7v3Seeds,
    tokens: xmlTokens,
    async setup() {
      const parse = await load('src/hl7v3/xml/parse.ts');
      const envelope = await load('src/hl7v3/message/envelope.ts');
      const interactions = await load('src/hl7v3/message/interactions.ts');
      const parseXml = exported<(bytes: Uint8Array) => { name: string }>(parse, 'parseXml', 'src/hl7v3/xml/parse.ts');
      const isHl7v3Message = exported<(root: unknown) => boolean>(envelope, 'isHl7v3Message', 'src/hl7v3/message/envelope.ts');
      const readEnvelope = exported<(root: unknown) => unknown>(envelope, 'readEnvelope', 'src/hl7v3/message/envelope.ts');
      const isSupported = exported<(name: string) => boolean>(interactions, 'isSupportedInteraction', 'src/hl7v3/message/interactions.ts');
      const readPatientCommand = exported<(root: unknown, interaction: string) => unknown>(interactions, 'readPatientCommand', 'src/hl7v3/message/interactions.ts');
      return (input) => {
        const root = parseXml(input);
        if (!isHl7v3Message(root)) return;
        readEnvelope(root);
        if (isSupported(root.name)) readPatientCommand(root, root.name);
      };
    },
    acceptable: named('XmlRejection'),
  },
  {
    name: 'FHIR JSON bodies (JSON, R4 validation)',
    seeds: fhirBodySeeds,
    tokens: jsonTokens,
    async setup() {
      const module = await load('src/domain/records/validation.ts');
      const assertValidResource = exported<(resource: unknown) => void>(module, 'assertValidResource', 'src/domain/records/validation.ts');
      return (input) => {
        const resource = JSON.parse(input.toString('utf8')) as unknown;
        // The route refuses a body that is not an object with a known resourceType before validation.
        if (typeof resource !== 'object' || resource === null || Array.isArray(resource)) return;
        assertValidResource(resource);
      };
    },
    acceptable: named('SyntaxError', 'DomainError', 'HttpProblem', 'OperationOutcomeError'),
  },
  {
    name: 'FHIR search parameters',
    seeds: fhirSearchSeeds,
    tokens: searchTokens,
    async setup() {
      const parseModule = await load('src/fhir/search/parse-search.ts');
      const definitions = await load('src/fhir/capability/resource-definitions.ts');
      const parseSearch = exported<(definition: unknown, params: [string, string][], strict: boolean) => unknown>(parseModule, 'parseSearch', 'src/fhir/search/parse-search.ts');
      const resourceDefinition = exported<(type: string) => unknown>(definitions, 'resourceDefinition', 'src/fhir/capability/resource-definitions.ts');
      const types = ['Patient', 'Condition', 'AllergyIntolerance', 'Observation', 'Procedure', 'DocumentReference', 'DiagnosticReport'];
      return (input, random) => {
        const definition = resourceDefinition(random.pick(types));
        // As the HTTP layer hands them over: the query string split into decoded pairs.
        const params = [...new URLSearchParams(input.toString('latin1'))];
        parseSearch(definition, params, random.next() < 0.3);
      };
    },
    acceptable: named('HttpProblem', 'DomainError'),
  },
  {
    name: 'MPPS JSON bodies',
    seeds: mppsSeeds,
    tokens: jsonTokens,
    async setup() {
      const body = await load('src/mpps/ingest-body.ts');
      const input = await load('src/domain/imaging/procedure-step-input.ts');
      const parseIngestBody = exported<(body: unknown) => unknown>(body, 'parseIngestBody', 'src/mpps/ingest-body.ts');
      const normalizeStepInput = exported<(input: unknown) => unknown>(input, 'normalizeStepInput', 'src/domain/imaging/procedure-step-input.ts');
      return (bytes) => {
        const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
        normalizeStepInput(parseIngestBody(parsed));
      };
    },
    acceptable: named('SyntaxError', 'HttpProblem', 'DomainError'),
  },
  {
    name: 'DICOM upper layer PDUs (framer, A-ASSOCIATE-RQ, P-DATA, command sets)',
    seeds: dicomPduSeeds,
    tokens: pduTokens,
    async setup() {
      const framerModule = await load('src/dicom/upper-layer/pdu-framer.ts');
      const associate = await load('src/dicom/upper-layer/associate-rq.ts');
      const pdv = await load('src/dicom/upper-layer/pdv.ts');
      const command = await load('src/dicom/dimse/command-set.ts');
      const PduFramer = exported<new (limit: (type: number) => number) => { push(chunk: Buffer): void; next(): { type: number; parts: Buffer[] } | undefined }>(framerModule, 'PduFramer', 'src/dicom/upper-layer/pdu-framer.ts');
      const parseAssociateRequest = exported<(body: Buffer) => unknown>(associate, 'parseAssociateRequest', 'src/dicom/upper-layer/associate-rq.ts');
      const parsePdvs = exported<(parts: Buffer[]) => { isCommand: boolean; fragment: Buffer[] }[]>(pdv, 'parsePdvs', 'src/dicom/upper-layer/pdv.ts');
      const decodeCommandSet = exported<(bytes: Buffer) => unknown>(command, 'decodeCommandSet', 'src/dicom/dimse/command-set.ts');
      return (input, random) => {
        const framer = new PduFramer(() => 64 * 1024);
        for (let offset = 0; offset < input.length; ) {
          const size = 1 + random.int(2048);
          framer.push(input.subarray(offset, offset + size));
          offset += size;
          for (let pdu = framer.next(); pdu; pdu = framer.next()) {
            if (pdu.type === 0x01) parseAssociateRequest(Buffer.concat(pdu.parts));
            if (pdu.type === 0x04) for (const item of parsePdvs(pdu.parts)) if (item.isCommand) decodeCommandSet(Buffer.concat(item.fragment));
          }
        }
      };
    },
    acceptable: named('UpperLayerError', 'CommandSetError'),
  },
  {
    name: 'DICOM datasets (C-STORE header sniffer, small-dataset reader)',
    seeds: () => dicomDatasetSeeds().map((s) => s.bytes),
    tokens: datasetTokens,
    async setup() {
      const sniffer = await load('src/storage/dicom/dataset/header-sniffer.ts');
      const small = await load('src/storage/dicom/dataset/small-dataset.ts');
      const HeaderSniffer = exported<new (ts: string) => { push(chunk: Buffer): Promise<void>; finish(): Promise<unknown>; dispose(): void }>(sniffer, 'HeaderSniffer', 'src/storage/dicom/dataset/header-sniffer.ts');
      const readSmallDataset = exported<(bytes: Buffer, ts: string, sopClass: string) => unknown>(small, 'readSmallDataset', 'src/storage/dicom/dataset/small-dataset.ts');
      const seeds: DatasetSeed[] = dicomDatasetSeeds();
      return async (input, random) => {
        const seed = random.pick(seeds);
        const instance = new HeaderSniffer(seed.transferSyntaxUid);
        try {
          for (let offset = 0; offset < input.length; offset += 4096) await instance.push(input.subarray(offset, offset + 4096));
          await instance.finish();
        } finally {
          instance.dispose();
        }
        // dcmjs is the reader of N-CREATE/N-SET datasets; its callers turn any throw into a
        // DIMSE failure status, so only hangs and process crashes count for this half.
        try {
          readSmallDataset(input, seed.transferSyntaxUid, seed.sopClassUid);
        } catch {
          // refused (dcmjs throws Errors, and pako's inflate throws plain strings)
        }
      };
    },
    acceptable: () => false,
  },
];
