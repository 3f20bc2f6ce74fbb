import { statfs } from 'node:fs/promises';

/**
 * What bounds a C-STORE's use of the disk (issue 26 point 13): the data set bytes of one instance,
 * and the free space in the DICOM storage folder below which stores are refused as out of resources
 * (PS3.4 B.2.3, 0xA7xx) so that the database and the other sites' instances keep room.
 */
export interface StoreLimits {
  maxInstanceBytes: number;
  /** True when the free space is below the floor (the DICOM one or the service's). */
  belowFreeSpaceFloor(): Promise<boolean>;
  /** True while the service-wide floor's last sample is below it (its guard logs that, once). */
  belowServiceFloor(): boolean;
}

/** A statfs result is reused this long: a burst of stores costs one system call, not one each. */
const freeSpaceCacheMs = 1_000;

/** `serviceBelowFloor`: the service-wide floor's last sample (CG_MIN_FREE_DISK, src/platform/disk-space). */
export function storeLimits(storageDir: string, maxInstanceBytes: number, minFreeBytes: number, serviceBelowFloor: () => boolean = () => false): StoreLimits {
  let checked: { at: number; below: Promise<boolean> } | undefined;
  return {
    maxInstanceBytes,
    belowServiceFloor: serviceBelowFloor,
    belowFreeSpaceFloor() {
      if (serviceBelowFloor()) return Promise.resolve(true);
      if (minFreeBytes <= 0) return Promise.resolve(false);
      const now = Date.now();
      if (!checked || now - checked.at > freeSpaceCacheMs) {
        // bavail: blocks an unprivileged writer may use, which is what the service is.
        const below = statfs(storageDir, { bigint: true }).then((stats) => stats.bavail * stats.bsize < BigInt(minFreeBytes));
        checked = { at: now, below };
        // A failed statfs is not remembered: the next store asks again.
        below.catch(() => {
          if (checked?.below === below) checked = undefined;
        });
      }
      return checked.below;
    },
  };
}
