-- wapipe schema (PostgreSQL 12 or later). Safe to apply twice: every
-- statement creates only what is missing or replaces a function, so it
-- also brings a database made by an older version up to date in place,
-- its data kept.
--
--   psql -v ON_ERROR_STOP=1 -1 -f sql/schema.sql
--
-- or, the same in one transaction, wa-campaign migrate (the schema is
-- built into the programs).

-- The schema's version (wa-campaign migrate; pg/migrate.h says the same
-- number). A database newer than this file is left alone: its columns
-- and functions may mean what this release does not know.
CREATE TABLE IF NOT EXISTS wapipe_schema (
	version		integer NOT NULL
);
DO $$
BEGIN
	IF (SELECT max(version) FROM wapipe_schema) > 2 THEN
		RAISE EXCEPTION 'the database''s schema is version %, newer '
		    'than this one (2): install the wapipe that made it',
		    (SELECT max(version) FROM wapipe_schema);
	END IF;
END $$;

CREATE TABLE IF NOT EXISTS campaigns (
	id		bigserial PRIMARY KEY,
	name		text NOT NULL,
	phone_number_id	text NOT NULL,
	template_name	text NOT NULL,
	template_lang	text NOT NULL DEFAULT 'en_US',
	state		text NOT NULL DEFAULT 'draft' CHECK (state IN
			    ('draft', 'running', 'paused', 'completed',
			    'cancelled')),
	-- Why the campaign was last paused or cancelled (e.g. a halt).
	state_reason	text,
	max_attempts	integer NOT NULL DEFAULT 10 CHECK (max_attempts > 0),
	-- A send whose fate is unknown: send again (risking a duplicate)
	-- or count it failed (risking a miss).
	on_unknown	text NOT NULL DEFAULT 'resend' CHECK (on_unknown IN
			    ('resend', 'fail')),
	created_at	timestamptz NOT NULL DEFAULT now(),
	started_at	timestamptz,
	finished_at	timestamptz,
	updated_at	timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS campaign_recipients (
	id		bigserial PRIMARY KEY,
	campaign_id	bigint NOT NULL REFERENCES campaigns (id)
			    ON DELETE CASCADE,
	-- E.164 with the '+': without it Meta prepends the sender's
	-- country code.
	phone		text NOT NULL CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
	template_params	jsonb NOT NULL DEFAULT '[]',
	status		text NOT NULL DEFAULT 'pending' CHECK (status IN
			    ('pending', 'sending', 'unknown', 'sent', 'failed',
			    'delivered', 'read')),
	-- Claims so far; also the fencing token of the claim in flight.
	attempt		integer NOT NULL DEFAULT 0,
	next_attempt_at	timestamptz NOT NULL DEFAULT now(),
	claimed_at	timestamptz,
	wamid		text,
	status_at	timestamptz,
	error_code	integer,
	error_title	text,
	UNIQUE (campaign_id, phone)
);

-- The last outage of the API that wa-record saw for the campaign (results
-- of class outage: the API unreachable): when it began, when its last
-- result came, when a result that reached the API ended it (NULL while it
-- lasts), why, and how many results it put back in all. Rows put back by
-- an outage are not an attempt and never fail for it.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS outage_started_at timestamptz;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS outage_seen_at timestamptz;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS outage_ended_at timestamptz;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS outage_reason text;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS outage_results bigint
	NOT NULL DEFAULT 0;

-- The circuit breaker wa-campaign run gives wa-send (--breaker: that many
-- sends in a row failing alike halt the campaign); NULL: wa-send's
-- default. Set with wa-campaign set.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS breaker integer
	CHECK (breaker > 0);

-- The class of the row's current error (lib/api/class.c's names:
-- transient, permanent, outage, ...); NULL when it has none. A row that
-- ends sent, delivered or read has no current error.
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS error_class text;

-- Every error of every attempt, for status, export and report: written by
-- wa-record in the statement that applies the result, and only for
-- errors, so a message sent at the first try costs no row here.
CREATE TABLE IF NOT EXISTS recipient_errors (
	recipient_id	bigint NOT NULL REFERENCES campaign_recipients (id)
			    ON DELETE CASCADE,
	attempt		integer NOT NULL,
	code		integer,
	class		text,
	title		text,
	at		timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS recipient_errors_recipient
	ON recipient_errors (recipient_id, attempt);

-- Where the row is in its life, from status: 0 to be claimed (pending),
-- 1 in flight (sending, unknown), 2 settled. The partial indexes below
-- name phase, not status, so that a status that moves within phase 2
-- (sent, delivered, read: two of every message's five writes) changes no
-- indexed column: Postgres then updates the row in place on its page
-- (a heap-only tuple) and writes no index entry; measured, the status
-- path's WAL falls by a third (bench/RESULTS.md). Queries that want an
-- index say phase as well as status.
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS phase smallint
	GENERATED ALWAYS AS (CASE status WHEN 'pending' THEN 0
	    WHEN 'sending' THEN 1 WHEN 'unknown' THEN 1 ELSE 2 END) STORED;

-- Room on each page for the row's next versions (claim, record, then
-- its statuses), so that they stay on its page: a version that must
-- move to another costs a lock record, a full update record and index
-- entries. Applies to pages written from now on.
ALTER TABLE campaign_recipients SET (fillfactor = 70);

-- An older database's indexes, on status or over every row's wamid, are
-- made again as below (an index on status would keep every status write
-- off the heap-only path).
DO $$
DECLARE
	i	record;
BEGIN
	FOR i IN SELECT c.relname,
	    coalesce(pg_get_expr(x.indpred, x.indrelid), '') AS pred
	    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
	    WHERE x.indrelid = 'campaign_recipients'::regclass
	    AND c.relname IN ('campaign_recipients_pending',
	    'campaign_recipients_unsettled', 'campaign_recipients_wamid')
	LOOP
		IF (i.relname = 'campaign_recipients_wamid' AND i.pred = '')
		    OR (i.relname <> 'campaign_recipients_wamid'
		    AND i.pred NOT LIKE '%phase%') THEN
			EXECUTE format('DROP INDEX %I', i.relname);
		END IF;
	END LOOP;
END $$;

-- Rows without a wamid (not yet sent) have no entry.
CREATE UNIQUE INDEX IF NOT EXISTS campaign_recipients_wamid
	ON campaign_recipients (wamid) WHERE wamid IS NOT NULL;

-- What wa-claim reads: stays small however many rows are done.
CREATE INDEX IF NOT EXISTS campaign_recipients_pending
	ON campaign_recipients (campaign_id, next_attempt_at)
	WHERE phase = 0;

-- What wa-reconcile and the completion check read.
CREATE INDEX IF NOT EXISTS campaign_recipients_unsettled
	ON campaign_recipients (campaign_id, claimed_at)
	WHERE phase = 1;

-- A status only ever moves to a higher rank, whoever writes it.
CREATE OR REPLACE FUNCTION status_rank(text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE $1
		WHEN 'pending' THEN 0 WHEN 'sending' THEN 0
		WHEN 'unknown' THEN 0 WHEN 'sent' THEN 1
		WHEN 'failed' THEN 2 WHEN 'delivered' THEN 3
		WHEN 'read' THEN 4
	END
$$;

-- wa-throttle --cluster: one row per number, shared by every host.
-- A GCRA on the server's clock: tat is when the next token is due; a
-- host leases about 100 ms of tokens at a time (throttle_lease), so the
-- row sees a few updates a second, not one per message.
CREATE TABLE IF NOT EXISTS throttle_buckets (
	phone_number_id	text PRIMARY KEY,
	rate		double precision NOT NULL CHECK (rate > 0),
	burst		integer NOT NULL CHECK (burst > 0),
	tat		timestamptz NOT NULL DEFAULT '-infinity',
	paused_until	timestamptz NOT NULL DEFAULT '-infinity',
	leases		bigint NOT NULL DEFAULT 0,
	leased		bigint NOT NULL DEFAULT 0,
	pauses		bigint NOT NULL DEFAULT 0,
	updated_at	timestamptz NOT NULL DEFAULT now()
);

-- Leases about p_seconds' worth of the number's tokens (its row made with
-- p_rate and p_burst if missing). Token i, from 0 to n - 1, may go
-- wait_s + i * every_s seconds from now and none after end_s; times
-- count from the server's clock at the lease, so hosts need not agree on
-- theirs. n = 0: none before wait_s, ask again by then. paused_s: how
-- long the number stays paused (0: not).
CREATE OR REPLACE FUNCTION throttle_lease(p_number text,
    p_seconds double precision, p_rate double precision, p_burst integer,
    OUT wait_s double precision, OUT n integer,
    OUT every_s double precision, OUT end_s double precision,
    OUT paused_s double precision, OUT cur_rate double precision,
    OUT cur_burst integer)
LANGUAGE plpgsql AS $$
DECLARE
	b	throttle_buckets;
	t	timestamptz;
	tau	double precision;
	start	timestamptz;
BEGIN
	-- A new bucket starts empty, as on a host.
	INSERT INTO throttle_buckets (phone_number_id, rate, burst, tat)
	VALUES (p_number, p_rate, p_burst, clock_timestamp() +
	    make_interval(secs => (p_burst - 1) / p_rate))
	ON CONFLICT DO NOTHING;
	SELECT * INTO b FROM throttle_buckets
	WHERE phone_number_id = p_number FOR UPDATE;
	-- Read the clock once the row is ours: a lease waits its turn.
	t := clock_timestamp();
	every_s := 1 / b.rate;
	tau := (b.burst - 1) * every_s;
	n := greatest(1, ceil(b.rate * p_seconds))::integer;
	start := greatest(b.tat, t,
	    b.paused_until + make_interval(secs => tau));
	wait_s := extract(epoch FROM start - t) - tau;
	IF wait_s > p_seconds THEN
		-- Too far ahead (a pause, or many hosts): reserve nothing,
		-- so that no lease outlives a pause by much; ask again then.
		n := 0;
	ELSE
		UPDATE throttle_buckets
		SET tat = start + make_interval(secs => n * every_s),
		    leases = leases + 1, leased = leased + n, updated_at = t
		WHERE phone_number_id = p_number;
	END IF;
	end_s := extract(epoch FROM start - t) + n * every_s;
	paused_s := CASE WHEN b.paused_until > t
	    THEN extract(epoch FROM b.paused_until - t) ELSE 0 END;
	cur_rate := b.rate;
	cur_burst := b.burst;
END
$$;

-- wa-status-ingest: statuses waiting for their row, and spool progress.
-- A status that matched no row yet (its wamid not recorded, its row
-- gone, or a message wapipe did not send): kept, retried with every batch
-- while young and by the periodic sweep after, expired after a week.
CREATE TABLE IF NOT EXISTS unmatched_statuses (
	wamid		text NOT NULL,
	status		text NOT NULL,
	-- From biz_opaque_callback_data "wapipe:<id>:<attempt>", if any.
	recipient_id	bigint,
	status_at	timestamptz,
	error_code	integer,
	error_title	text,
	received_at	timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (wamid, status)
);

CREATE INDEX IF NOT EXISTS unmatched_statuses_received
	ON unmatched_statuses (received_at);

-- How far wa-status-ingest --follow has applied a spool directory:
-- committed in the same transaction as the statuses it applied.
CREATE TABLE IF NOT EXISTS spool_checkpoints (
	spool		text PRIMARY KEY,
	segment		bigint NOT NULL,
	byte_offset	bigint NOT NULL,
	updated_at	timestamptz NOT NULL DEFAULT now()
);

-- Every change of a campaign's state, with its reason, for the report's
-- timeline (created, started, each pause and why, completed): written by
-- the trigger below whoever moves the campaign (wa-campaign, a halt in
-- wa-record, wa-claim completing it), so no program has to remember to.
-- A campaign made before this table has no events; the report then
-- falls back on the campaign's own times.
CREATE TABLE IF NOT EXISTS campaign_events (
	campaign_id	bigint NOT NULL REFERENCES campaigns (id)
			    ON DELETE CASCADE,
	at		timestamptz NOT NULL DEFAULT clock_timestamp(),
	state		text NOT NULL,
	reason		text
);

CREATE INDEX IF NOT EXISTS campaign_events_campaign
	ON campaign_events (campaign_id, at);

CREATE OR REPLACE FUNCTION campaign_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state THEN
		INSERT INTO campaign_events (campaign_id, state, reason)
		VALUES (NEW.id, NEW.state, NEW.state_reason);
	END IF;
	RETURN NULL;
END
$$;

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname =
	    'campaign_events' AND tgrelid = 'campaigns'::regclass) THEN
		CREATE TRIGGER campaign_events
		AFTER INSERT OR UPDATE OF state ON campaigns
		FOR EACH ROW EXECUTE FUNCTION campaign_event();
	END IF;
END
$$;

-- Last: the version this file brought the database to.
DELETE FROM wapipe_schema;
INSERT INTO wapipe_schema (version) VALUES (2);
