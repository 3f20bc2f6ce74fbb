import { familyName, givenName } from '../dataset/synthetic.ts';

/**
 * Synthetic HL7 v2.5.1 messages of the MLLP scenarios: ADT^A01 (admit, one new patient each)
 * and ORU^R01 with five OBX (a basic metabolic panel). Every message has its own control id
 * (MSH-10), since a re-sent control id is answered from the message log without storing.
 */
const timestamp = () => new Date().toISOString().replace(/\D/g, '').slice(0, 14);

function header(type: string, controlId: string): string {
  return `MSH|^~\\&|BENCHAPP|BENCHFAC|CLINICALGATEWAY|BENCH|${timestamp()}||${type}|${controlId}|P|2.5.1`;
}

function pid(identifier: string, i: number): string {
  return `PID|1||${identifier}^^^BENCH^MR||${familyName(i)}^${givenName(i)}||19700101|${i % 2 === 0 ? 'F' : 'M'}|||1 Main Street^^Springfield^IL^62701^USA||^PRN^PH^^^555^0100`;
}

export function adtA01(runTag: string, n: number): string {
  return [
    header('ADT^A01^ADT_A01', `${runTag}A${n}`),
    `EVN|A01|${timestamp()}`,
    pid(`${runTag}P${n}`, n),
    `PV1|1|I|WARD^101^1^BENCH||||1234^Attending^Alice`,
  ].join('\r');
}

const panel = [
  ['2345-7', 'Glucose', '95', 'mg/dL', '70-99'],
  ['2951-2', 'Sodium', '140', 'mmol/L', '135-145'],
  ['2823-3', 'Potassium', '4.1', 'mmol/L', '3.5-5.1'],
  ['2160-0', 'Creatinine', '0.9', 'mg/dL', '0.6-1.2'],
  ['3094-0', 'Urea nitrogen', '14', 'mg/dL', '7-20'],
] as const;

/** Results for one of `patients` patients, so results accumulate on known patients. */
export function oruR01(runTag: string, n: number, patients: number): string {
  const p = n % patients;
  return [
    header('ORU^R01^ORU_R01', `${runTag}R${n}`),
    pid(`${runTag}Q${p}`, p),
    `OBR|1|${runTag}O${n}|${runTag}F${n}|24320-4^Basic metabolic panel^LN|||${timestamp()}`,
    ...panel.map(([code, name, value, unit, range], i) => `OBX|${i + 1}|NM|${code}^${name}^LN||${value}|${unit}|${range}|N|||F|||${timestamp()}`),
  ].join('\r');
}
