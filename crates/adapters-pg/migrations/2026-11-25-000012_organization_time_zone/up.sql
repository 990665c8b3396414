-- An organization's time zone (an IANA name): where its monthly access review reads its months
-- and work hours. Organizations stored before it was kept are read in UTC.
ALTER TABLE organizations ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';
