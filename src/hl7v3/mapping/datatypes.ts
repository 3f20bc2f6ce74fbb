import type { Address, ContactPoint, HumanName, Identifier } from '@medplum/fhirtypes';
import { attribute, textOf, type XmlElement } from '../xml/element.ts';

/**
 * HL7 v3 Data Types (Release 1, XML ITS) to FHIR R4 data types, after the FHIR R4 "RIM mapping"
 * columns of Identifier, HumanName, Address and ContactPoint. Each function reads one element and
 * returns undefined for a null flavor or an element with nothing in it.
 */

const oid = /^[0-2](\.(0|[1-9]\d*))+$/;
const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The FHIR system URI of an II root: urn:oid: for an OID, urn:uuid: for a UUID, else as given. */
export function systemOfRoot(root: string): string {
  if (oid.test(root)) return `urn:oid:${root}`;
  if (uuid.test(root)) return `urn:uuid:${root.toLowerCase()}`;
  return root;
}

export type IdentifierResult =
  | { identifier: Identifier; problem?: 'no-root' }
  | { identifier?: undefined; problem: 'null' | 'no-value' | 'bad-root' };

/** II.root is an OID, a UUID or an HL7-reserved RUID (Data Types R1, section 2.17.5). */
const ruid = /^[A-Za-z][A-Za-z0-9-]*$/;

/**
 * II to Identifier: root is the system, extension the value. An II with only a root is itself
 * the identifier (Data Types R1, II.root: "unique identifier ... without extension"), written as
 * system urn:ietf:rfc:3986 with the root's URI as the value. assigningAuthorityName is only a
 * display name of the root, so it is kept only when there is no root.
 */
export function identifierOf(element: XmlElement): IdentifierResult {
  if (attribute(element, 'nullFlavor') !== undefined) return { problem: 'null' };
  const root = attribute(element, 'root');
  const extension = attribute(element, 'extension');
  if (!root) {
    if (extension === undefined) return { problem: 'no-value' };
    // Not valid v3 (root is required), but senders do it: keep the value and name the authority,
    // as the HL7 v2 path does for a CX whose assigning authority has only a namespace.
    const authority = attribute(element, 'assigningAuthorityName');
    return { identifier: { value: extension, ...(authority ? { assigner: { display: authority } } : {}) }, problem: 'no-root' };
  }
  if (!oid.test(root) && !uuid.test(root) && !ruid.test(root)) return { problem: 'bad-root' };
  if (extension === undefined) return { identifier: { system: 'urn:ietf:rfc:3986', value: systemOfRoot(root) } };
  return { identifier: { system: systemOfRoot(root), value: extension } };
}

/** EntityNameUse (2.16.840.1.113883.5.45) to FHIR name-use. */
const nameUses: Record<string, HumanName['use']> = {
  L: 'official',
  OR: 'official',
  C: 'official',
  P: 'nickname',
  A: 'nickname',
  ANON: 'anonymous',
  ASGN: 'usual',
  I: 'usual',
};

/**
 * PN to HumanName. Parts in document order: family parts (several are joined with a space),
 * given parts, prefix and suffix. A family part qualified BR (birth) or a name with only text is
 * kept as it is; a name with text but no parts becomes HumanName.text.
 */
export function humanNameOf(element: XmlElement): HumanName | undefined {
  if (attribute(element, 'nullFlavor') !== undefined) return undefined;
  const family: string[] = [];
  const given: string[] = [];
  const prefix: string[] = [];
  const suffix: string[] = [];
  for (const part of element.children) {
    const value = textOf(part);
    if (!value) continue;
    if (part.name === 'family') family.push(value);
    else if (part.name === 'given') given.push(value);
    else if (part.name === 'prefix') prefix.push(value);
    else if (part.name === 'suffix') suffix.push(value);
  }
  const name: HumanName = {};
  const use = firstMapped(attribute(element, 'use'), nameUses);
  if (use) name.use = use;
  if (family.length > 0) name.family = family.join(' ');
  if (given.length > 0) name.given = given;
  if (prefix.length > 0) name.prefix = prefix;
  if (suffix.length > 0) name.suffix = suffix;
  if (element.children.length === 0) {
    const text = textOf(element);
    if (text) name.text = text;
  } else if (family.length + given.length > 0) {
    // The display form the HL7 v2 path writes: prefix, given names, family, suffix.
    name.text = [...prefix, ...given, ...family, ...suffix].join(' ');
  }
  return name.family || name.given || name.text ? name : undefined;
}

/** PostalAddressUse (2.16.840.1.113883.5.1119) to FHIR address-use / address-type. */
const addressUses: Record<string, Address['use']> = { H: 'home', HP: 'home', HV: 'home', WP: 'work', DIR: 'work', PUB: 'work', TMP: 'temp', OLD: 'old', BAD: 'old' };
const addressTypes: Record<string, Address['type']> = { PHYS: 'physical', PST: 'postal' };

/**
 * AD to Address. streetAddressLine parts are lines; a houseNumber or streetName given beside
 * them completes the last line ("100 JORIE BLVD" + "5" -> "100 JORIE BLVD 5"), as IHE's v2/v3
 * PIX pairs write it; without streetAddressLine they form the line on their own.
 */
export function addressOf(element: XmlElement): Address | undefined {
  if (attribute(element, 'nullFlavor') !== undefined) return undefined;
  const lines: string[] = [];
  const streetParts: string[] = [];
  const address: Address = {};
  for (const part of element.children) {
    const value = textOf(part);
    if (!value) continue;
    switch (part.name) {
      case 'streetAddressLine':
      case 'deliveryAddressLine':
        lines.push(value);
        break;
      case 'streetName':
      case 'houseNumber':
      case 'houseNumberNumeric':
      case 'additionalLocator':
      case 'unitID':
        streetParts.push(value);
        break;
      case 'city':
        address.city = value;
        break;
      case 'state':
        address.state = value;
        break;
      case 'postalCode':
        address.postalCode = value;
        break;
      case 'country':
        address.country = value;
        break;
      case 'county':
        address.district = value;
        break;
    }
  }
  if (streetParts.length > 0) {
    if (lines.length > 0) lines[lines.length - 1] = `${lines.at(-1)} ${streetParts.join(' ')}`;
    else lines.push(streetParts.join(' '));
  }
  if (lines.length > 0) address.line = lines;
  if (element.children.length === 0) {
    const text = textOf(element);
    if (text) address.text = text;
  } else if (Object.keys(address).length > 0) {
    // The display form the HL7 v2 path writes: "line, city, state postalCode, country".
    address.text = [lines.join(', '), address.city, [address.state, address.postalCode].filter(Boolean).join(' '), address.country]
      .filter((part) => part)
      .join(', ');
  }
  if (Object.keys(address).length === 0) return undefined;
  const use = firstMapped(attribute(element, 'use'), addressUses);
  const type = firstMapped(attribute(element, 'use'), addressTypes);
  return { ...(use ? { use } : {}), ...(type ? { type } : {}), ...address };
}

/** TelecommunicationAddressUse (2.16.840.1.113883.5.1119) to FHIR contact-point-use. */
const telecomUses: Record<string, ContactPoint['use']> = { H: 'home', HP: 'home', HV: 'home', WP: 'work', DIR: 'work', PUB: 'work', MC: 'mobile', TMP: 'temp', OLD: 'old', BAD: 'old' };

/** URL scheme of a TEL value (RFC 3966 tel:, RFC 6068 mailto:, fax:) to FHIR contact-point-system. */
const telecomSystems: Record<string, ContactPoint['system']> = { tel: 'phone', fax: 'fax', mailto: 'email', http: 'url', https: 'url', x400: 'other', modem: 'other' };

/** TEL to ContactPoint: the URL scheme is the system, the rest the value; PG use means a pager. */
export function contactPointOf(element: XmlElement): ContactPoint | undefined {
  if (attribute(element, 'nullFlavor') !== undefined) return undefined;
  const raw = attribute(element, 'value');
  if (!raw) return undefined;
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/.exec(raw);
  const scheme = match?.[1]?.toLowerCase();
  let system = scheme ? telecomSystems[scheme] : undefined;
  const value = match && system && system !== 'url' ? decodeTelValue(match[2]!) : raw;
  const uses = (attribute(element, 'use') ?? '').split(/\s+/);
  if (uses.includes('PG')) system = 'pager';
  const contact: ContactPoint = { system: system ?? 'other', value };
  const use = firstMapped(attribute(element, 'use'), telecomUses);
  if (use) contact.use = use;
  return contact;
}

function decodeTelValue(value: string): string {
  try {
    return decodeURIComponent(value).trim();
  } catch {
    return value.trim();
  }
}

/** The first of a space-separated set of codes (v3 use attributes are sets) that maps. */
function firstMapped<T>(codes: string | undefined, table: Record<string, T>): T | undefined {
  for (const code of (codes ?? '').split(/\s+/)) {
    const mapped = table[code];
    if (mapped !== undefined) return mapped;
  }
  return undefined;
}
