/** Why a body was refused before any HL7 v3 meaning was read from it. */
export type XmlRejectionReason =
  | 'doctype' // a document type declaration: refused so that no entity is ever declared or expanded
  | 'malformed' // not well-formed XML 1.0
  | 'encoding' // bytes not valid in the declared encoding, or an encoding we do not read
  | 'too-deep' // element nesting beyond the limit
  | 'too-many-nodes' // more elements or attributes than any patient message needs
  | 'too-large'; // more bytes than the limit

export class XmlRejection extends Error {
  override readonly name = 'XmlRejection';
  readonly reason: XmlRejectionReason;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(reason: XmlRejectionReason, message: string, position?: { line: number; column: number }) {
    super(message);
    this.reason = reason;
    this.line = position?.line;
    this.column = position?.column;
  }
}
