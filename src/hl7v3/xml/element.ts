/**
 * A small, read-only element tree: just what reading an HL7 v3 instance needs. Names are local
 * names with their resolved namespace URI, so a document that binds urn:hl7-org:v3 to a prefix
 * (`<hl7:PRPA_IN201301UV02 xmlns:hl7="urn:hl7-org:v3">`) reads the same as one that uses it as the
 * default namespace (XML Namespaces 1.0, section 6).
 */
export const hl7v3Namespace = 'urn:hl7-org:v3';

export interface XmlElement {
  readonly name: string;
  readonly namespace: string;
  /** Unprefixed attributes by local name; namespaced ones as `{uri}local`. */
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: readonly XmlElement[];
  /** Concatenated character data directly inside this element (text and CDATA). */
  readonly text: string;
  /** 1-based line of the start tag, for acknowledgement locations. */
  readonly line: number;
  /** Simple XPath from the root (`/PRPA_IN201301UV02/controlActProcess[1]/...`). */
  readonly path: string;
}

/** The HL7 v3 child elements called `name` (in the v3 namespace), in document order. */
export function childrenNamed(parent: XmlElement | undefined, name: string): XmlElement[] {
  if (!parent) return [];
  return parent.children.filter((child) => child.name === name && child.namespace === hl7v3Namespace);
}

/** The first HL7 v3 child element called `name`. */
export function childNamed(parent: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!parent) return undefined;
  return parent.children.find((child) => child.name === name && child.namespace === hl7v3Namespace);
}

/** Follows a path of v3 element names, taking the first match at each step. */
export function descend(parent: XmlElement | undefined, ...names: string[]): XmlElement | undefined {
  let current = parent;
  for (const name of names) current = childNamed(current, name);
  return current;
}

/** An attribute value with surrounding whitespace removed; undefined when absent or blank. */
export function attribute(element: XmlElement | undefined, name: string): string | undefined {
  const value = element?.attributes.get(name)?.trim();
  return value ? value : undefined;
}

/** Element text with whitespace collapsed (v3 ST/ENXP content is whitespace-normalised). */
export function textOf(element: XmlElement | undefined): string | undefined {
  const value = element?.text.replace(/\s+/g, ' ').trim();
  return value ? value : undefined;
}
