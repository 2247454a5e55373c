-- Up Migration
-- The buyer's details an invoice shows (issue 34): set by the organisation's administrators.
ALTER TABLE organisations
  ADD COLUMN address text CHECK (char_length(address) BETWEEN 1 AND 300),
  ADD COLUMN tin text CHECK (tin ~ '^[0-9][0-9-]{6,18}[0-9]$');

-- One counter row per invoice year (Lagos). A credit takes the next number by updating its year's row
-- inside the credit's transaction: concurrent credits queue on the row lock, and a credit that rolls
-- back gives its number back with everything else, so numbers are never shared and never skipped.
CREATE TABLE invoice_counters (
  year integer PRIMARY KEY CHECK (year BETWEEN 2000 AND 9999),
  last_number integer NOT NULL CHECK (last_number BETWEEN 1 AND 999999)
);

-- One VAT invoice per credited top-up; the buyer as the organisation was when the payment was credited.
CREATE TABLE invoices (
  number text PRIMARY KEY CHECK (number ~ '^INV-[0-9]{4}-[0-9]{6}$'),
  year integer NOT NULL,
  seq integer NOT NULL,
  topup_reference text NOT NULL UNIQUE REFERENCES topups (reference),
  org_id bigint NOT NULL REFERENCES organisations (id),
  issued_at timestamptz NOT NULL,
  buyer_name text NOT NULL,
  buyer_address text,
  buyer_tin text,
  UNIQUE (year, seq),
  CHECK (number = 'INV-' || year::text || '-' || lpad(seq::text, 6, '0'))
);
CREATE INDEX invoices_org_idx ON invoices (org_id, issued_at);

-- Top-ups credited before invoices existed get theirs now, in the order they were credited.
INSERT INTO invoices (number, year, seq, topup_reference, org_id, issued_at, buyer_name)
SELECT 'INV-' || n.year::text || '-' || lpad(n.seq::text, 6, '0'), n.year, n.seq, n.reference, n.org_id, n.credited_at, o.name
FROM (
  SELECT t.reference, t.org_id, t.credited_at, y.year,
         row_number() OVER (PARTITION BY y.year ORDER BY t.credited_at, t.reference)::int AS seq
  FROM topups t, LATERAL (SELECT extract(year FROM t.credited_at AT TIME ZONE 'Africa/Lagos')::int AS year) y
  WHERE t.credited_at IS NOT NULL
) n
JOIN organisations o ON o.id = n.org_id;
INSERT INTO invoice_counters (year, last_number) SELECT year, max(seq) FROM invoices GROUP BY year;

-- Down Migration
DROP TABLE invoices;
DROP TABLE invoice_counters;
ALTER TABLE organisations DROP COLUMN tin, DROP COLUMN address;
