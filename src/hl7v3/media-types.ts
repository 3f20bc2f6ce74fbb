/** The media types of HL7 v3 XML (RFC 7303 application/xml and text/xml; HL7's own registration). */
export const hl7v3MediaTypes = ['application/xml', 'text/xml', 'application/hl7-v3+xml'] as const;
