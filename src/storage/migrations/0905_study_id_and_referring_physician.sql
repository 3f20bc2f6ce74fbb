-- Study ID (0020,0010) and Referring Physician's Name (0008,0090): study attributes that QIDO-RS
-- must return when the instances carry them (PS3.18 table 10.6.3-3) and that C-FIND requestors
-- ask at study level. Taken from the first instance that has them, like the other study
-- attributes (src/domain/imaging/index-instance-statement.ts). Studies stored before this
-- version answer them empty until another of their instances is stored: the files are not read
-- again for them.
ALTER TABLE imaging_study
  ADD COLUMN study_id text,
  ADD COLUMN referring_physician_name text;
