/**
 * Message types as metric label values: only the types the service accepts keep their name,
 * anything else a sender writes is `other`, so a sender cannot grow the number of series.
 * (The lists are those of src/hl7v2/intake/plan.ts and src/hl7v3/message/interactions.ts; the
 * platform does not import surfaces, and test/platform/metrics.test.ts keeps them equal.)
 */
export const metricHl7v2Types: readonly string[] = [
  ...['A01', 'A02', 'A03', 'A04', 'A05', 'A06', 'A07', 'A08', 'A11', 'A12', 'A13', 'A28', 'A31', 'A40'].map((event) => `ADT^${event}`),
  'ORU^R01',
];
export const metricHl7v3Interactions: readonly string[] = ['PRPA_IN201301UV02', 'PRPA_IN201302UV02', 'PRPA_IN201304UV02'];

/** MSH-9 as the intake renders it (ADT^A01, or ADT^A01^ADT_A01): its message code and event. */
export function hl7v2MessageType(messageType: string): string {
  const [code = '', event = ''] = messageType.split('^');
  const type = `${code}^${event}`;
  return metricHl7v2Types.includes(type) ? type : 'other';
}

/** How far into a v3 body (a SOAP envelope first, perhaps) the interaction's element is looked for. */
const interactionSearchBytes = 8 * 1024;

/** The interaction a v3 message names in its root element, if it is one the service accepts. */
export function hl7v3Interaction(raw: Uint8Array): string {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, interactionSearchBytes)).toString('latin1');
  const found = /<(?:[A-Za-z_][\w.-]*:)?(PRPA_IN\d{6}UV\d{2})[\s>/]/.exec(head)?.[1];
  return found !== undefined && metricHl7v3Interactions.includes(found) ? found : 'other';
}
