/**
 * UIDs the listener negotiates (PS3.6 annex A). Transfer syntaxes are accepted exactly as
 * proposed: the dataset is stored as received, never transcoded (issue 5, point 1).
 */

/** PS3.7 A.2.1: the DICOM application context name, the only one defined. */
export const applicationContextUid = '1.2.840.10008.3.1.1.1';

/**
 * PS3.5 B.2: a UID derived from a UUID under the 2.25 root, so no organisation root is needed.
 * Identifies this implementation in A-ASSOCIATE-AC and in the file meta of stored files.
 */
export const implementationClassUid = '2.25.291775333063326767191509584345431219821';
export const implementationVersionName = 'CLINGW_010';

export const verificationSopClass = '1.2.840.10008.1.1';
/** PS3.4 F.7: Modality Performed Procedure Step SOP Class. */
export const mppsSopClass = '1.2.840.10008.3.1.2.3.3';

/** PS3.4 C.6: Query/Retrieve information models, by root and operation. */
export const queryRetrieveSopClass = {
  patientRootFind: '1.2.840.10008.5.1.4.1.2.1.1',
  patientRootMove: '1.2.840.10008.5.1.4.1.2.1.2',
  patientRootGet: '1.2.840.10008.5.1.4.1.2.1.3',
  studyRootFind: '1.2.840.10008.5.1.4.1.2.2.1',
  studyRootMove: '1.2.840.10008.5.1.4.1.2.2.2',
  studyRootGet: '1.2.840.10008.5.1.4.1.2.2.3',
} as const;

export type QueryRetrieveOperation = 'find' | 'move' | 'get';

/** The operation a Query/Retrieve SOP class serves, and whether it is the Patient Root model. */
export function queryRetrieveModel(uid: string): { operation: QueryRetrieveOperation; patientRoot: boolean } | undefined {
  const entry = Object.entries(queryRetrieveSopClass).find(([, value]) => value === uid);
  if (!entry) return undefined;
  const name = entry[0];
  const operation = name.endsWith('Find') ? 'find' : name.endsWith('Move') ? 'move' : 'get';
  return { operation, patientRoot: name.startsWith('patientRoot') };
}

export const transferSyntax = {
  implicitLittle: '1.2.840.10008.1.2',
  explicitLittle: '1.2.840.10008.1.2.1',
  deflatedExplicitLittle: '1.2.840.10008.1.2.1.99',
  explicitBig: '1.2.840.10008.1.2.2',
} as const;

/** Transfer syntaxes whose dataset is readable without decompressing pixel data. */
const uncompressed = [
  transferSyntax.explicitLittle,
  transferSyntax.implicitLittle,
  transferSyntax.deflatedExplicitLittle,
  transferSyntax.explicitBig,
];

/** Encapsulated syntaxes: explicit VR little endian outside the pixel data (PS3.5 A.4). */
const encapsulated = [
  '1.2.840.10008.1.2.5', // RLE Lossless
  '1.2.840.10008.1.2.4.50', // JPEG Baseline (Process 1)
  '1.2.840.10008.1.2.4.51', // JPEG Extended (Process 2 & 4)
  '1.2.840.10008.1.2.4.57', // JPEG Lossless, Non-Hierarchical (Process 14)
  '1.2.840.10008.1.2.4.70', // JPEG Lossless, Non-Hierarchical, First-Order Prediction (SV1)
  '1.2.840.10008.1.2.4.80', // JPEG-LS Lossless
  '1.2.840.10008.1.2.4.81', // JPEG-LS Lossy (Near-Lossless)
  '1.2.840.10008.1.2.4.90', // JPEG 2000 Image Compression (Lossless Only)
  '1.2.840.10008.1.2.4.91', // JPEG 2000 Image Compression
  '1.2.840.10008.1.2.4.201', // High-Throughput JPEG 2000 Image Compression (Lossless Only)
  '1.2.840.10008.1.2.4.202', // High-Throughput JPEG 2000 with RPCL Options (Lossless Only)
  '1.2.840.10008.1.2.4.203', // High-Throughput JPEG 2000 Image Compression
];

/** What a Storage presentation context may carry. */
export const storageTransferSyntaxes: ReadonlySet<string> = new Set([...uncompressed, ...encapsulated]);

/** What Query/Retrieve contexts carry: identifiers are small and read here, little endian only. */
export const queryTransferSyntaxes: ReadonlySet<string> = new Set([transferSyntax.explicitLittle, transferSyntax.implicitLittle]);

/** What Verification and MPPS contexts may carry: their datasets are read, so no pixel codecs. */
export const plainTransferSyntaxes: ReadonlySet<string> = new Set(uncompressed);

/**
 * PS3.4 B.5: every standard Storage SOP Class lives under 1.2.840.10008.5.1.4.1.1; the few
 * defined elsewhere are listed. Private (vendor) SOP classes are not accepted.
 */
const storageRoot = '1.2.840.10008.5.1.4.1.1.';
const storageOutsideRoot = new Set([
  '1.2.840.10008.5.1.4.38.1', // Hanging Protocol Storage
  '1.2.840.10008.5.1.4.39.1', // Color Palette Storage
  '1.2.840.10008.5.1.4.43.1', // Generic Implant Template Storage
  '1.2.840.10008.5.1.4.44.1', // Implant Assembly Template Storage
  '1.2.840.10008.5.1.4.45.1', // Implant Template Group Storage
  '1.2.840.10008.5.1.4.34.10', // RT Brachy Application Setup Delivery Instruction Storage
]);

export function isStorageSopClass(uid: string): boolean {
  return (uid.startsWith(storageRoot) && /^[0-9.]+$/.test(uid) && !uid.endsWith('.')) || storageOutsideRoot.has(uid);
}
