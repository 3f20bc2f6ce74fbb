/**
 * Synthesised HL7 v2.5.1 messages with a unique control id (MSH-10) and patient identifier
 * (PID-3), so that every acknowledged message can be found again and counted exactly.
 */
export interface SenderIdentity {
  sendingApplication: string;
  sendingFacility: string;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:TZ.]/g, '').slice(0, 14);
}

/** ADT^A04 (register a patient) whose PID-3 is `mrn`. */
export function admitMessage(sender: SenderIdentity, controlId: string, mrn: string, family = 'Faultline', given = 'Test'): string {
  return [
    `MSH|^~\\&|${sender.sendingApplication}|${sender.sendingFacility}|CLINICAL_GATEWAY|CG|${timestamp()}||ADT^A04^ADT_A01|${controlId}|P|2.5.1`,
    `EVN|A04|${timestamp()}`,
    `PID|1||${mrn}^^^FAULTS^MR||${family}^${given}||19700101|F|||1 Test Street^^Testville^^12345^NL||^PRN^PH^^^^^^^^^+31201234567`,
    `PV1|1|O|CLINIC^1^1||||1234^Doctor^Dana|||||||||||V${controlId}`,
  ].join('\r') + '\r';
}

/** ORU^R01 with one numeric OBX for patient `mrn`. */
export function resultMessage(sender: SenderIdentity, controlId: string, mrn: string, value: number): string {
  return [
    `MSH|^~\\&|${sender.sendingApplication}|${sender.sendingFacility}|CLINICAL_GATEWAY|CG|${timestamp()}||ORU^R01^ORU_R01|${controlId}|P|2.5.1`,
    `PID|1||${mrn}^^^FAULTS^MR||Faultline^Test||19700101|F`,
    `OBR|1|ORD${controlId}|FIL${controlId}|2345-7^Glucose^LN|||${timestamp()}`,
    `OBX|1|NM|2345-7^Glucose^LN||${value}|mg/dL|70-100|N|||F|||${timestamp()}`,
  ].join('\r') + '\r';
}
