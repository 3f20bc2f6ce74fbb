-- Data lifecycle, site offboarding: a site is first marked (purge_after: the end of its grace
-- period, for exporting what it takes with it), then purged once that has passed
-- (src/domain/retention/site-offboarding.ts). NULL: not being offboarded.
ALTER TABLE site ADD COLUMN offboarding_marked_at timestamptz;
ALTER TABLE site ADD COLUMN purge_after timestamptz;
ALTER TABLE site ADD CONSTRAINT site_offboarding_both CHECK ((offboarding_marked_at IS NULL) = (purge_after IS NULL));
