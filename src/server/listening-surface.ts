/** One listener of a serving process, as announced at start and reported by a worker to its supervisor. */
export interface ListeningSurface {
  name: string;
  protocol: 'http' | 'https' | 'mllp' | 'dicom';
  host: string;
  port: number;
}
