-- The database of the contract's `db`, `queries`, `fortunes` and `updates` features
-- (spec/contract.md, "Database workloads"). serverbench runs this once in a fresh cluster of its
-- own; the data are the same on every run (a fixed seed), so runs compare.
-- Schema version: bump SCHEMA_VERSION in crates/database when this file changes: a cluster made
-- from an older version is rebuilt, never reused.

CREATE TABLE world (
  id integer NOT NULL,
  randomnumber integer NOT NULL DEFAULT 0,
  PRIMARY KEY (id)
);

CREATE TABLE fortune (
  id integer NOT NULL,
  message varchar(2048) NOT NULL,
  PRIMARY KEY (id)
);

-- 10,000 rows of random numbers in 1..10,000, from a fixed seed.
SELECT setseed(0.2026);
INSERT INTO world (id, randomnumber)
SELECT i, 1 + floor(random() * 10000)::integer FROM generate_series(1, 10000) AS i;

-- The twelve fortunes: HTML specials, a script tag, an apostrophe, em dashes and Japanese, so a
-- template that does not escape, or a client that mangles UTF-8, shows.
INSERT INTO fortune (id, message) VALUES
  (1, 'fortune: No such file or directory'),
  (2, 'A computer scientist is someone who fixes things that aren''t broken.'),
  (3, 'After enough decimal places, nobody gives a damn.'),
  (4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
  (5, 'A computer program does what you tell it to do, not what you want it to do.'),
  (6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
  (7, 'Any program that runs right is obsolete.'),
  (8, 'A list is only as strong as its weakest link. — Donald Knuth'),
  (9, 'Feature: A bug with seniority.'),
  (10, 'Computers make very fast, very accurate mistakes.'),
  (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
  (12, 'フレームワークのベンチマーク');

ANALYZE world;
ANALYZE fortune;
