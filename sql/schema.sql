-- wapipe schema (PostgreSQL 12 or later). Safe to apply twice: every
-- statement creates only what is missing or replaces a function, so it
-- also brings a database made by an older version up to date in place,
-- its data kept.
--
--   psql -v ON_ERROR_STOP=1 -1 -f sql/schema.sql
--
-- or, the same in one transaction, wa-campaign migrate (the schema is
-- built into the programs).

-- The schema's version (wa-campaign migrate; cmd/wa-campaign/migrate.c
-- says the same number). A database newer than this file is left alone: its columns
-- and functions may mean what this release does not know.
CREATE TABLE IF NOT EXISTS wapipe_schema (
	version		integer NOT NULL
);
DO $$
BEGIN
	IF (SELECT max(version) FROM wapipe_schema) > 10 THEN
		RAISE EXCEPTION 'the database''s schema is version %, newer '
		    'than this one (10): install the wapipe that made it',
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
			    ('draft', 'scheduled', 'running', 'paused',
			    'completed', 'cancelled')),
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
			    'delivered', 'read', 'suppressed', 'expired')),
	-- Claims so far; also the fencing token of the claim in flight.
	attempt		integer NOT NULL DEFAULT 0,
	next_attempt_at	timestamptz NOT NULL DEFAULT now(),
	claimed_at	timestamptz,
	wamid		text,
	status_at	timestamptz,
	error_code	integer,
	error_title	text
);

-- A campaign that starts itself (version 7): wa-campaign start --at
-- makes it scheduled, with the time; the first claim from then on (or
-- wa-campaign run, waiting for it) makes it running. A pause keeps the
-- time: resumed before it, the campaign is scheduled again.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS start_at timestamptz;
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_constraint
	    WHERE conrelid = 'campaigns'::regclass
	    AND conname = 'campaigns_state_check'
	    AND pg_get_constraintdef(oid) LIKE '%scheduled%') THEN
		ALTER TABLE campaigns
		    DROP CONSTRAINT IF EXISTS campaigns_state_check;
		ALTER TABLE campaigns ADD CONSTRAINT campaigns_state_check
		    CHECK (state IN ('draft', 'scheduled', 'running',
		    'paused', 'completed', 'cancelled'));
	END IF;
END $$;

-- This database's deployment tag (version 7): made once, by the first
-- migration, never changed. wa-claim puts it in each send request and
-- wa-send in the callback data, "wapipe:TAG:ID:ATTEMPT": Meta sends every
-- status to every app of the account, and a status whose callback data
-- names another deployment (staging beside production, another tenant)
-- never moves a row here. wa-campaign status shows it.
CREATE TABLE IF NOT EXISTS wapipe_deployment (
	tag		text PRIMARY KEY CHECK (tag ~ '^[0-9a-z]{1,16}$')
);
INSERT INTO wapipe_deployment (tag)
SELECT substr(md5(random()::text || clock_timestamp()::text ||
    pg_backend_pid()::text), 1, 8)
WHERE NOT EXISTS (SELECT 1 FROM wapipe_deployment);

-- The person's WhatsApp id, where the send's answer (contacts[].wa_id)
-- gave one that is not the number sent to (version 7): an old Brazilian
-- account's lacks the ninth digit, and the person's messages, opt-outs
-- and statuses carry it. NULL for nearly every row (no byte written).
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS wa_id text;
CREATE INDEX IF NOT EXISTS campaign_recipients_wa_id
	ON campaign_recipients (wa_id) WHERE wa_id IS NOT NULL;

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

-- The claims in flight (version 8): one row per claim statement, its
-- campaign, its time (the claimed_at of its rows), its token
-- (wa-claim's), the ids it claimed and where its scan stopped (the
-- next_attempt_at and id of the last row it took: where the campaign's
-- next claim starts). A claim leaves its rows in phase 0 (below), so
-- that it changes no indexed column and writes no index entry; this
-- table is how the rows in flight are found again (wa-claim's checks,
-- wa-reconcile, wa-campaign run's sweep): every row sending is among
-- the ids of a claim of its campaign (a row put back and claimed again
-- may be among those of two). A claim whose rows are all settled is
-- deleted by the next claim of its campaign, by wa-reconcile, and at
-- the campaign's completion. A database from before gets a row for
-- each time its rows in flight were claimed at.
DO $$
BEGIN
	IF to_regclass('campaign_claims') IS NULL THEN
		CREATE TABLE campaign_claims (
			campaign_id	bigint NOT NULL REFERENCES campaigns (id)
					    ON DELETE CASCADE,
			claimed_at	timestamptz NOT NULL,
			token		integer,
			ids		bigint[] NOT NULL,
			last_at		timestamptz,
			last_id		bigint
		);
		CREATE INDEX campaign_claims_campaign
		    ON campaign_claims (campaign_id, claimed_at);
		INSERT INTO campaign_claims (campaign_id, claimed_at, ids)
		SELECT campaign_id, claimed_at, array_agg(id ORDER BY id)
		FROM campaign_recipients
		WHERE status = 'sending' AND claimed_at IS NOT NULL
		GROUP BY campaign_id, claimed_at;
	END IF;
END $$;

-- The columns a status changes come last (version 9): status_at, then
-- status, after the wamid, the times and the errors; after them only
-- phase (made below, from status) and the columns added since version
-- 1 (pricing, which a status may set, among them; a database from
-- before has those first). Of an update that stays on its page,
-- Postgres logs the new version's bytes from the first that differs to
-- the last, so a status (delivered, read) logs these and not the wamid
-- and times that stood between them: measured, paced with the
-- statuses, 75 bytes of WAL a message fewer (bench/RESULTS.md). A
-- database from before has the two made again at the end, with their
-- values and default (the check on status is made again below, with
-- the final states): one update of each row; the table is rewritten
-- when phase is made again. On a new one the same runs on the empty
-- table.
DO $$
DECLARE
	r	regclass := 'campaign_recipients';
	dflt	text;
BEGIN
	IF (SELECT attnum FROM pg_attribute WHERE attrelid = r
	    AND attname = 'status_at') < (SELECT attnum FROM pg_attribute
	    WHERE attrelid = r AND attname = 'error_class') THEN
		SELECT pg_get_expr(d.adbin, d.adrelid) INTO dflt
		FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid
		AND a.attnum = d.adnum WHERE d.adrelid = r
		AND a.attname = 'status';
		ALTER TABLE campaign_recipients RENAME status TO status_was;
		ALTER TABLE campaign_recipients RENAME status_at TO status_at_was;
		ALTER TABLE campaign_recipients ADD COLUMN status_at timestamptz,
		    ADD COLUMN status text;
		UPDATE campaign_recipients
		SET status_at = status_at_was, status = status_was;
		ALTER TABLE campaign_recipients DROP COLUMN status_was CASCADE,
		    DROP COLUMN status_at_was;
		EXECUTE format('ALTER TABLE campaign_recipients ALTER status '
		    'SET DEFAULT %s, ALTER status SET NOT NULL', dflt);
	END IF;
END $$;

-- Where the row is in its life, from status: 0 to be claimed or claimed
-- (pending, sending), 1 left unknown, 2 settled. The partial indexes
-- below name phase, not status, so that a status that moves within a
-- phase changes no indexed column: Postgres then updates the row in
-- place on its page (a heap-only tuple) and writes no index entry. So
-- it is for the claim (pending to sending, version 8: before, sending
-- was phase 1, and each claim wrote two index entries, some 230 bytes
-- of WAL a message with the version that moved page) and for the
-- statuses (sent, delivered, read: measured, the status path's WAL
-- fell by a third). bench/RESULTS.md has the figures. Queries that want
-- an index say phase as well as status. A database from before has its
-- column made again (the table rewritten once; its partial indexes are
-- made again below).
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_attribute a
	    ON a.attrelid = d.adrelid AND a.attnum = d.adnum
	    WHERE d.adrelid = 'campaign_recipients'::regclass
	    AND a.attname = 'phase'
	    AND pg_get_expr(d.adbin, d.adrelid) LIKE
	    '%''sending''::text THEN 1%') THEN
		ALTER TABLE campaign_recipients DROP COLUMN phase CASCADE;
	END IF;
END $$;
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS phase smallint
	GENERATED ALWAYS AS (CASE status WHEN 'pending' THEN 0
	    WHEN 'sending' THEN 0 WHEN 'unknown' THEN 1 ELSE 2 END) STORED;

-- Room on each page for the row's next versions (claim, record, then
-- its statuses), so that they stay on its page: a version that must
-- move to another costs a lock record, a full update record and index
-- entries. A claim takes a page's rows together, and their old versions
-- stay until it commits, so the page must hold each row twice: at 45%
-- it does (version 8; 70 before). Measured (bench/RESULTS.md), claim
-- and record 695 bytes a message at 45, 774 at 50, 810 at 55, 952 at
-- 70, for a table a half larger than at 70. Applies to pages written
-- from now on.
ALTER TABLE campaign_recipients SET (fillfactor = 45);

-- An older database's indexes, on status, or (before version 8) the unsettled rows' on claimed_at and the pending
-- rows' without id, are made again as below (an index on status would
-- keep every status write off the heap-only path, one on claimed_at
-- every claim); its index on phone is dropped (the phones' table has
-- it, below).
DO $$
DECLARE
	i	record;
BEGIN
	FOR i IN SELECT c.relname,
	    coalesce(pg_get_expr(x.indpred, x.indrelid), '') AS pred,
	    pg_get_indexdef(x.indexrelid) AS def
	    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
	    WHERE x.indrelid = 'campaign_recipients'::regclass
	    AND c.relname IN ('campaign_recipients_pending',
	    'campaign_recipients_unsettled', 'campaign_recipients_phone')
	LOOP
		IF i.relname = 'campaign_recipients_phone'
		    OR (i.relname IN ('campaign_recipients_pending',
		    'campaign_recipients_unsettled')
		    AND i.pred NOT LIKE '%phase%')
		    OR (i.relname = 'campaign_recipients_unsettled'
		    AND i.def LIKE '%claimed_at%')
		    OR (i.relname = 'campaign_recipients_pending'
		    AND i.def NOT LIKE '%, id)%') THEN
			EXECUTE format('DROP INDEX %I', i.relname);
		END IF;
	END LOOP;
END $$;

-- No index on the wamid (version 10; versions 1 to 9 had one, on its
-- md5 from 9). Every result wrote an entry, at random places in the
-- index: measured flat out, 92 bytes of WAL a message of 634 and 20 us
-- of Postgres's CPU of 73 (bench/RESULTS.md). A status names its row
-- in its callback data, and carries its person's number, as an inbound
-- message does: a wamid is looked for among its person's rows
-- (pg/statusdb.c's ROWS_OF), a handful, through campaign_phones. Meta
-- gives each message its own wamid; nothing here checks it again.
DO $$
BEGIN
	IF to_regclass('campaign_recipients_wamid') IS NOT NULL THEN
		DROP INDEX campaign_recipients_wamid;
	END IF;
	IF to_regprocedure('wamid_key(text)') IS NOT NULL THEN
		DROP FUNCTION wamid_key(text);
	END IF;
END $$;

-- What wa-claim reads: stays small however many rows are done.
CREATE INDEX IF NOT EXISTS campaign_recipients_pending
	ON campaign_recipients (campaign_id, next_attempt_at, id)
	WHERE phase = 0;

-- The rows left unknown: what wa-reconcile and the completion check read.
-- Not on claimed_at, which every claim writes: an index on it would keep
-- the claim off the heap-only path.
CREATE INDEX IF NOT EXISTS campaign_recipients_unsettled
	ON campaign_recipients (campaign_id)
	WHERE phase = 1;

-- Who is in a campaign, once each (version 7): the uniqueness of
-- (campaign, phone) kept beside the recipients, not in an index on them.
-- Such an index takes an entry at every write that makes a new version
-- of a row (the claim's and the result's: some 140 bytes of WAL each,
-- bench/RESULTS.md); here the entry is written once, when the row is
-- added, by each INSERT's statement at its end. A row for a phone its
-- campaign already has fails its statement, as a unique index would;
-- wa-campaign import leaves such rows out (and counts them duplicates).
CREATE TABLE IF NOT EXISTS campaign_phones (
	campaign_id	bigint NOT NULL REFERENCES campaigns (id)
			    ON DELETE CASCADE,
	phone		text NOT NULL,
	recipient_id	bigint NOT NULL,
	PRIMARY KEY (campaign_id, phone)
);

CREATE OR REPLACE FUNCTION campaign_phones_add() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO campaign_phones (campaign_id, phone, recipient_id)
	SELECT campaign_id, phone, id FROM added;
	RETURN NULL;
END
$$;

-- An older database: its phones listed, its index on them dropped.
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_constraint
	    WHERE conrelid = 'campaign_recipients'::regclass
	    AND conname = 'campaign_recipients_campaign_id_phone_key') THEN
		INSERT INTO campaign_phones (campaign_id, phone, recipient_id)
		SELECT campaign_id, phone, id FROM campaign_recipients
		ON CONFLICT DO NOTHING;
		ALTER TABLE campaign_recipients
		    DROP CONSTRAINT campaign_recipients_campaign_id_phone_key;
	END IF;
END $$;

-- Made once: a schema applied again neither drops it nor says so.
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger
	    WHERE tgrelid = 'campaign_recipients'::regclass
	    AND tgname = 'campaign_recipients_phones') THEN
		CREATE TRIGGER campaign_recipients_phones
		    AFTER INSERT ON campaign_recipients
		    REFERENCING NEW TABLE AS added
		    FOR EACH STATEMENT EXECUTE FUNCTION campaign_phones_add();
	END IF;
END $$;

-- A campaign's rows, for status, report, export and requeue: a block
-- range index (a campaign's rows are added together), which a new row
-- version leaves as it is unless it lands outside its range's values.
CREATE INDEX IF NOT EXISTS campaign_recipients_campaign
	ON campaign_recipients USING brin (campaign_id);

-- A status only ever moves to a higher rank, whoever writes it.
CREATE OR REPLACE FUNCTION status_rank(text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE $1
		WHEN 'pending' THEN 0 WHEN 'sending' THEN 0
		WHEN 'unknown' THEN 0 WHEN 'sent' THEN 1
		WHEN 'failed' THEN 2 WHEN 'suppressed' THEN 2
		WHEN 'expired' THEN 2 WHEN 'delivered' THEN 3
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
-- The attempt and the deployment tag of the callback data (version 7),
-- checked as a status applied at once is when its row appears.
ALTER TABLE unmatched_statuses ADD COLUMN IF NOT EXISTS attempt integer;
ALTER TABLE unmatched_statuses ADD COLUMN IF NOT EXISTS deployment text;
-- The number of the person it went to (version 10): where its wamid is
-- looked for when its row may hold it (pg/statusdb.c).
ALTER TABLE unmatched_statuses ADD COLUMN IF NOT EXISTS phone text;

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

-- The rules of the road (version 3): messaging limits, opt-outs, expiry,
-- send windows, fair share and priority. wapipe_claim below applies them
-- to every row it claims, whichever host claims it.

-- Two final states of their own: never sent because the person opted
-- out (suppressions), or because the row's time ran out (expires_at).
DO $$
DECLARE
	def	text;
BEGIN
	SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
	WHERE conrelid = 'campaign_recipients'::regclass
	    AND conname = 'campaign_recipients_status_check';
	IF def IS NULL OR def NOT LIKE '%expired%' THEN
		-- None on a new table: the version-9 move dropped it.
		IF def IS NOT NULL THEN
			ALTER TABLE campaign_recipients
			    DROP CONSTRAINT campaign_recipients_status_check;
		END IF;
		ALTER TABLE campaign_recipients
		    ADD CONSTRAINT campaign_recipients_status_check
		    CHECK (status IN ('pending', 'sending', 'unknown', 'sent',
		    'failed', 'delivered', 'read', 'suppressed', 'expired'));
	END IF;
END $$;

-- A row past its expiry (or its campaign's) is never sent: it ends
-- expired. tz: the recipient's time zone, from the number at import
-- (NULL where the country spans zones: the campaign's tz is used).
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS expires_at
	timestamptz;
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS tz text;

-- expires_at: nothing of the campaign is sent after it. window_from and
-- window_to: the hours, in the recipient's local time, within which it
-- sends (from > to wraps past midnight); tz: the zone of a recipient
-- whose number does not say. weight: its share of the number's rate
-- against the number's other campaigns; urgent: while it has rows to
-- send, the number's other campaigns send nothing.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS window_from time;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS window_to time;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS tz text;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS weight integer NOT NULL
	DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000);
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS priority text NOT NULL
	DEFAULT 'normal' CHECK (priority IN ('normal', 'urgent'));

-- A business portfolio's numbers. Meta's messaging limit belongs to the
-- portfolio, shared by all its numbers (cloud-api-2026.md §4, since
-- October 2025); a number in no portfolio here is one of its own, named
-- by its id. wa-campaign limit --portfolio puts numbers in one.
CREATE TABLE IF NOT EXISTS portfolio_numbers (
	phone_number_id	text PRIMARY KEY,
	portfolio	text NOT NULL
);

CREATE OR REPLACE FUNCTION portfolio_of(p_number text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT coalesce((SELECT portfolio FROM portfolio_numbers
	    WHERE phone_number_id = p_number), p_number)
$$;

-- A portfolio's messaging limit: how many different people its numbers
-- may message outside a customer-service window in a rolling period
-- (Meta's: 24 hours), across every campaign and host. No row, or
-- max_people NULL: unlimited.
CREATE TABLE IF NOT EXISTS messaging_limits (
	portfolio	text PRIMARY KEY,
	max_people	integer CHECK (max_people > 0),
	period_s	integer NOT NULL DEFAULT 86400 CHECK (period_s > 0),
	updated_at	timestamptz NOT NULL DEFAULT now()
);

-- Whom a limited portfolio has messaged, and when that person's period
-- began: someone messaged within the period does not count again.
CREATE TABLE IF NOT EXISTS limit_contacts (
	portfolio	text NOT NULL,
	phone		text NOT NULL,
	opened_at	timestamptz NOT NULL,
	PRIMARY KEY (portfolio, phone)
);

-- How many people a limited portfolio began a period with, by slice of
-- time (a period has 1,440 slices: minutes of a day), so that a claim
-- sums at most 1,441 rows, not every contact. A slice counts until its
-- end is a period old: the count errs on the safe side by one slice.
CREATE TABLE IF NOT EXISTS limit_usage (
	portfolio	text NOT NULL,
	slice		bigint NOT NULL,
	n		integer NOT NULL,
	PRIMARY KEY (portfolio, slice)
);

-- Before version 7 a limit was a number's: its id is now the name of its
-- portfolio of one, so the limits and counts go on as they were.
DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM information_schema.columns
	    WHERE table_name = 'messaging_limits'
	    AND column_name = 'phone_number_id') THEN
		ALTER TABLE messaging_limits
		    RENAME COLUMN phone_number_id TO portfolio;
		ALTER TABLE limit_contacts
		    RENAME COLUMN phone_number_id TO portfolio;
		ALTER TABLE limit_usage
		    RENAME COLUMN phone_number_id TO portfolio;
		DROP FUNCTION IF EXISTS limit_used(text, integer,
		    timestamptz);
		DROP FUNCTION IF EXISTS messaging_limit_set(text, integer,
		    integer);
	END IF;
END
$$;

-- The slice of time t for a period of p seconds.
CREATE OR REPLACE FUNCTION limit_slice(t timestamptz, p integer)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT floor(extract(epoch FROM t) / (p / 1440.0))::bigint
$$;

-- The people a portfolio with period p has counted at t, and when the
-- first of them stops counting (NULL: none counts).
CREATE OR REPLACE FUNCTION limit_used(p_portfolio text, p integer,
    t timestamptz, OUT used bigint, OUT frees_at timestamptz)
LANGUAGE sql STABLE AS $$
	SELECT coalesce(sum(n), 0), to_timestamp((min(slice) + 1) *
	    (p / 1440.0)) + make_interval(secs => p)
	FROM limit_usage WHERE portfolio = p_portfolio
	    AND slice >= limit_slice(t - make_interval(secs => p), p)
$$;

-- wa-campaign limit: sets a portfolio's limit (p_max NULL: unlimited)
-- and period (NULL: kept, or a day), and counts again from its contacts
-- in the period's slices; an unlimited portfolio keeps no contacts.
CREATE OR REPLACE FUNCTION messaging_limit_set(p_portfolio text,
    p_max integer, p_period integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	l	messaging_limits;
BEGIN
	INSERT INTO messaging_limits (portfolio, max_people, period_s)
	VALUES (p_portfolio, p_max, coalesce(p_period, 86400))
	ON CONFLICT (portfolio) DO UPDATE
	SET max_people = EXCLUDED.max_people, period_s =
	    coalesce(p_period, messaging_limits.period_s), updated_at = now()
	RETURNING * INTO l;
	DELETE FROM limit_contacts WHERE portfolio = p_portfolio
	    AND (p_max IS NULL OR opened_at <= now() -
	    make_interval(secs => l.period_s));
	DELETE FROM limit_usage WHERE portfolio = p_portfolio;
	INSERT INTO limit_usage (portfolio, slice, n)
	SELECT p_portfolio, limit_slice(opened_at, l.period_s), count(*)
	FROM limit_contacts WHERE portfolio = p_portfolio
	GROUP BY 2;
END
$$;

-- wa-campaign limit --portfolio: number p_number joins p_portfolio. A
-- number alone until now brings its people and its limit: the
-- portfolio keeps the higher of the two limits (unlimited the highest),
-- as Meta did when it moved limits to portfolios; a number leaving
-- another portfolio leaves its people counted there (they cannot be
-- told apart from its fellows').
CREATE OR REPLACE FUNCTION portfolio_join(p_portfolio text,
    p_number text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	was	text := portfolio_of(p_number);
	mine	messaging_limits;
	theirs	messaging_limits;
BEGIN
	IF was = p_portfolio THEN
		RETURN;
	END IF;
	INSERT INTO portfolio_numbers (phone_number_id, portfolio)
	VALUES (p_number, p_portfolio)
	ON CONFLICT (phone_number_id) DO UPDATE SET portfolio = p_portfolio;
	IF was <> p_number THEN
		RETURN;
	END IF;
	SELECT * INTO mine FROM messaging_limits WHERE portfolio = was
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT * INTO theirs FROM messaging_limits
	WHERE portfolio = p_portfolio FOR UPDATE;
	INSERT INTO limit_contacts AS k (portfolio, phone, opened_at)
	SELECT p_portfolio, phone, opened_at FROM limit_contacts
	WHERE portfolio = was
	ON CONFLICT (portfolio, phone)
	DO UPDATE SET opened_at = greatest(k.opened_at, EXCLUDED.opened_at);
	DELETE FROM limit_contacts WHERE portfolio = was;
	DELETE FROM limit_usage WHERE portfolio = was;
	DELETE FROM messaging_limits WHERE portfolio = was;
	PERFORM messaging_limit_set(p_portfolio,
	    CASE WHEN theirs.portfolio IS NULL THEN mine.max_people
	    WHEN mine.max_people IS NULL OR theirs.max_people IS NULL
	    THEN NULL ELSE greatest(mine.max_people, theirs.max_people) END,
	    coalesce(theirs.period_s, mine.period_s));
END
$$;

-- People who must not be messaged: scope is a phone_number_id, or '*'
-- for every number of the business. Added by hand (wa-campaign
-- suppress), by error 131050 (below) and by an inbound opt-out keyword
-- (wa-status-ingest).
CREATE TABLE IF NOT EXISTS suppressions (
	scope		text NOT NULL,
	phone		text NOT NULL,
	reason		text NOT NULL,
	added_at	timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (scope, phone)
);

-- What the claim asks of each row, the number's list and the business's
-- at once: one descent of this index, not one of the key's per scope.
CREATE INDEX IF NOT EXISTS suppressions_phone ON suppressions (phone);

-- Who a business-scoped user id (BSUID, cloud-api-2026.md §6) is: the
-- number a status of a message sent to it, or a message from it, named
-- with the id (wa-status-ingest). Meta gives one id per person and
-- portfolio, and a new number a new id: an id names one number. An
-- opt-out from someone Meta names by the id alone is kept under the id
-- until then (scope, the id as phone); the trigger below moves it to
-- the number when the two are first seen together.
CREATE TABLE IF NOT EXISTS user_ids (
	user_id		text PRIMARY KEY,
	phone		text NOT NULL,
	seen_at		timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION suppress_user_ids() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	WITH moved AS (DELETE FROM suppressions s USING fresh f
	    WHERE s.phone = f.user_id
	    RETURNING s.scope, f.phone, s.reason, s.added_at)
	INSERT INTO suppressions (scope, phone, reason, added_at)
	SELECT scope, phone, reason, added_at FROM moved
	ON CONFLICT DO NOTHING;
	RETURN NULL;
END
$$;

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname =
	    'suppress_user_ids' AND tgrelid = 'user_ids'::regclass) THEN
		CREATE TRIGGER suppress_user_ids AFTER INSERT ON user_ids
		REFERENCING NEW TABLE AS fresh
		FOR EACH STATEMENT EXECUTE FUNCTION suppress_user_ids();
	END IF;
END
$$;

-- An inbound message whose whole text is one of these (trimmed, any
-- case) opts its sender out of the number that received it.
CREATE TABLE IF NOT EXISTS optout_keywords (
	keyword		text PRIMARY KEY,
	lang		text
);
INSERT INTO optout_keywords (keyword, lang) VALUES
	('stop', 'en'), ('unsubscribe', 'en'), ('stop all', 'en'),
	-- The quick reply many marketing templates carry (a tap is an
	-- inbound button message with this text: cloud-api-2026.md §5).
	('stop promotions', 'en'),
	('basta', 'it'), ('cancella', 'it'), ('alto', 'es'), ('baja', 'es'),
	('parar', 'pt'), ('sair', 'pt'), ('arret', 'fr'), ('arrêt', 'fr'),
	('stopp', 'de'), ('abmelden', 'de')
ON CONFLICT DO NOTHING;

-- Error 131050: the person stopped marketing messages from the business.
-- Whoever records it (wa-record, wa-status-ingest), the person is added
-- to the number's suppressions. WHEN is checked in C, row by row: other
-- updates call nothing.
CREATE OR REPLACE FUNCTION suppress_opted_out() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO suppressions (scope, phone, reason)
	SELECT c.phone_number_id, NEW.phone, 'error 131050: opted out'
	FROM campaigns c WHERE c.id = NEW.campaign_id
	ON CONFLICT DO NOTHING;
	RETURN NULL;
END
$$;

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname =
	    'suppress_opted_out' AND tgrelid =
	    'campaign_recipients'::regclass) THEN
		CREATE TRIGGER suppress_opted_out
		AFTER UPDATE OF error_code ON campaign_recipients
		FOR EACH ROW WHEN (NEW.error_code = 131050 AND
		    OLD.error_code IS DISTINCT FROM 131050)
		EXECUTE FUNCTION suppress_opted_out();
	END IF;
END
$$;

-- When a row outside its send window may go: the next opening of the
-- window, at from, in zone z, after t.
CREATE OR REPLACE FUNCTION window_opens(t timestamptz, z text, f time,
    u time) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN f < u AND (t AT TIME ZONE z)::time < f
	    OR f > u AND (t AT TIME ZONE z)::time < f
	    AND (t AT TIME ZONE z)::time >= u
	THEN ((t AT TIME ZONE z)::date + f) AT TIME ZONE z
	ELSE ((t AT TIME ZONE z)::date + 1 + f) AT TIME ZONE z END
$$;

-- Whether t is within the window from f to u in zone z.
CREATE OR REPLACE FUNCTION window_open(t timestamptz, z text, f time,
    u time) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT f IS NULL OR CASE WHEN f < u
	THEN (t AT TIME ZONE z)::time >= f AND (t AT TIME ZONE z)::time < u
	ELSE (t AT TIME ZONE z)::time >= f OR (t AT TIME ZONE z)::time < u END
$$;

-- Which claim statement took a row (version 5): wa-claim's token for
-- the statement, so that a claim whose commit was answered by a server
-- that then went away (a failover) is found again after the reconnect:
-- wa-claim emits its rows, never sent, instead of leaving them sending
-- (see wa-claim.c). Each wa-claim (or each round of wa-campaign run)
-- takes a block of 65,536 tokens from the sequence, one per claim, so no
-- two claimers share one. Four bytes and no index: measured, the claim
-- writes 4 bytes more WAL a message and the rest of the path none
-- (bench/RESULTS.md; a bigint cost the status path 55, the row's claimed
-- version no longer leaving room to update in place). Only that rare
-- search and run's sweep of its own round read it.
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS claim_token
	integer;
CREATE SEQUENCE IF NOT EXISTS wapipe_claim_tags AS integer
	INCREMENT BY 65536 MINVALUE -2147483648 MAXVALUE 2147418112
	START WITH -2147483648 CYCLE;
DO $$
BEGIN
	IF to_regprocedure('wapipe_claim(bigint, integer)') IS NOT NULL THEN
		DROP FUNCTION wapipe_claim(bigint, integer);
	END IF;
END $$;

-- Whether any row of claim k is still in flight (sending). Its last row
-- first: a claim's rows settle about in order.
CREATE OR REPLACE FUNCTION claim_in_flight(k campaign_claims)
RETURNS boolean LANGUAGE sql STABLE AS $$
	SELECT EXISTS (SELECT 1 FROM campaign_recipients r
	    WHERE r.id = k.ids[cardinality(k.ids)] AND r.status = 'sending')
	OR EXISTS (SELECT 1 FROM campaign_recipients r
	    WHERE r.id = ANY(k.ids) AND r.status = 'sending')
$$;

-- A campaign completed has nothing in flight: its claims go.
CREATE OR REPLACE FUNCTION campaign_claims_end() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM campaign_claims WHERE campaign_id = NEW.id;
	RETURN NULL;
END
$$;
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger
	    WHERE tgrelid = 'campaigns'::regclass
	    AND tgname = 'campaigns_claims_end') THEN
		CREATE TRIGGER campaigns_claims_end
		    AFTER UPDATE OF state ON campaigns FOR EACH ROW
		    WHEN (NEW.state = 'completed' AND OLD.state <> 'completed')
		    EXECUTE FUNCTION campaign_claims_end();
	END IF;
END $$;

-- wa-claim: claims up to p_n due rows of a running campaign (starting a
-- scheduled one whose time has come), applying
-- the rules: a row past its expiry ends expired, one whose person opted
-- out ends suppressed, one outside its send window waits for it to open;
-- a campaign waits while an urgent one on its number has rows due; on a
-- number of a limited portfolio a person not messaged within the period
-- is claimed only while the portfolio's count (limit_used) is under its
-- limit (the limit's row locked: one claim at a time counts, on every
-- host), unless the person wrote to the number in the last 24 hours (an
-- open customer-service window: Meta does not count them). Returns the
-- rows claimed, each marked with p_token. Claims of one campaign take
-- turns (a transaction's advisory lock, no WAL); a row is not locked
-- before its update: a lock record per row was a tenth of the claim's
-- WAL (bench/RESULTS.md). Each update says again which rows it wants,
-- so that a row another writer changed meanwhile is left as it is.
CREATE OR REPLACE FUNCTION wapipe_claim(p_campaign bigint, p_n integer,
    p_token integer DEFAULT NULL)
RETURNS TABLE (id bigint, attempt integer, phone text,
    template_params jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
	c	campaigns;
	lim	messaging_limits;
	pf	text;		-- the number's portfolio
	t	timestamptz := now();
	since	timestamptz;
	x	bigint[];	-- expired
	s	bigint[];	-- suppressed
	w	bigint[];	-- outside the window
	g	bigint[];	-- to claim
	gp	text[];		-- their phones
	np	text[];		-- the people a limited number newly messages
	used	bigint;
	from_at	timestamptz;	-- where the campaign's last claim stopped
	from_id	bigint;
	last_at	timestamptz;	-- and where this one stops
	last_id	bigint;
BEGIN
	SELECT * INTO c FROM campaigns WHERE campaigns.id = p_campaign;
	IF FOUND AND c.state = 'scheduled' AND c.start_at <= t THEN
		-- Its time has come: the first claim starts it (once).
		UPDATE campaigns SET state = 'running', state_reason =
		    'started at its scheduled time', updated_at = t,
		    started_at = coalesce(started_at, t)
		WHERE campaigns.id = p_campaign AND state = 'scheduled'
		RETURNING * INTO c;
	END IF;
	IF NOT FOUND OR c.state <> 'running' THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_xact_lock(hashtext('wapipe_claim'),
	    hashint8(p_campaign));
	-- The campaign's claims whose rows are all settled are let go (those
	-- of the last seconds are likely still in flight: left for later).
	DELETE FROM campaign_claims k
	WHERE k.campaign_id = p_campaign AND k.claimed_at < t - interval '2 s'
	    AND NOT claim_in_flight(k);
	IF c.expires_at <= t THEN
		UPDATE campaign_recipients SET status = 'expired'
		WHERE campaign_id = p_campaign AND phase = 0
		    AND status = 'pending';
		RETURN;
	END IF;
	IF c.priority <> 'urgent' AND EXISTS (SELECT 1 FROM campaigns u
	    WHERE u.phone_number_id = c.phone_number_id
	    AND u.priority = 'urgent' AND u.state = 'running'
	    AND EXISTS (SELECT 1 FROM campaign_recipients r
	    WHERE r.campaign_id = u.id AND r.phase = 0
	    AND r.status = 'pending' AND r.next_attempt_at <= t)) THEN
		RETURN;
	END IF;
	-- The rows in flight stay in the pending index (their claim changed
	-- no indexed column), before the rows still to claim: the scan
	-- starts after the last row the campaign's last claim took, and
	-- from the start only when the rows after it run out (rows put back
	-- behind it are claimed then).
	SELECT k.last_at, k.last_id INTO from_at, from_id
	FROM campaign_claims k WHERE k.campaign_id = p_campaign
	ORDER BY k.claimed_at DESC LIMIT 1;
	from_at := coalesce(from_at, '-infinity');
	from_id := coalesce(from_id, 0);
	-- The due rows, each with its verdict.
	SELECT array_agg(q.id) FILTER (WHERE v = 'x'),
	    array_agg(q.id) FILTER (WHERE v = 's'),
	    array_agg(q.id) FILTER (WHERE v = 'w'),
	    array_agg(q.id ORDER BY q.nat, q.id) FILTER (WHERE v = 'g'),
	    array_agg(q.phone ORDER BY q.nat, q.id) FILTER (WHERE v = 'g'),
	    (array_agg(q.nat ORDER BY q.nat DESC, q.id DESC))[1],
	    (array_agg(q.id ORDER BY q.nat DESC, q.id DESC))[1]
	INTO x, s, w, g, gp, last_at, last_id
	FROM (SELECT r.id, r.phone, r.nat, CASE
	    WHEN r.exp <= t THEN 'x'
	    WHEN z.hit THEN 's'
	    WHEN window_open(t, r.zone, c.window_from, c.window_to) THEN 'g'
	    WHEN window_opens(t, r.zone, c.window_from, c.window_to) >= r.exp
	    THEN 'x'
	    ELSE 'w' END AS v
	    FROM (SELECT r.id, r.phone, r.next_attempt_at AS nat,
	    least(r.expires_at, c.expires_at) AS exp,
	    coalesce(r.tz, c.tz, 'UTC') AS zone
	    FROM ((SELECT * FROM campaign_recipients r
	    WHERE r.campaign_id = p_campaign AND r.phase = 0
	    AND r.status = 'pending' AND r.next_attempt_at <= t
	    AND (r.next_attempt_at, r.id) > (from_at, from_id)
	    ORDER BY r.next_attempt_at, r.id LIMIT p_n)
	    UNION ALL
	    (SELECT * FROM campaign_recipients r
	    WHERE r.campaign_id = p_campaign AND r.phase = 0
	    AND r.status = 'pending' AND r.next_attempt_at <= t
	    AND (r.next_attempt_at, r.id) <= (from_at, from_id)
	    ORDER BY r.next_attempt_at, r.id LIMIT p_n)) r
	    LIMIT p_n) r
	    -- A probe of the index per row (LIMIT 1): never a hash of the
	    -- whole list, which the planner would build for EXISTS here.
	    LEFT JOIN LATERAL (SELECT true AS hit FROM suppressions z
	    WHERE z.phone = r.phone AND z.scope IN (c.phone_number_id, '*')
	    LIMIT 1) z ON true) q;
	IF x IS NOT NULL THEN
		UPDATE campaign_recipients SET status = 'expired'
		WHERE campaign_recipients.id = ANY(x) AND phase = 0
		    AND status = 'pending';
	END IF;
	IF s IS NOT NULL THEN
		UPDATE campaign_recipients SET status = 'suppressed'
		WHERE campaign_recipients.id = ANY(s) AND phase = 0
		    AND status = 'pending';
	END IF;
	IF w IS NOT NULL THEN
		UPDATE campaign_recipients r SET next_attempt_at =
		    window_opens(t, coalesce(r.tz, c.tz, 'UTC'),
		    c.window_from, c.window_to)
		WHERE r.id = ANY(w) AND r.phase = 0 AND r.status = 'pending';
	END IF;
	IF g IS NULL THEN
		RETURN;
	END IF;
	pf := portfolio_of(c.phone_number_id);
	SELECT * INTO lim FROM messaging_limits
	WHERE portfolio = pf AND max_people IS NOT NULL
	FOR UPDATE;
	IF FOUND THEN
		since := t - make_interval(secs => lim.period_s);
		SELECT u.used INTO used FROM limit_used(pf, lim.period_s, t) u;
		-- People messaged within the period go free; the others in
		-- order while the limit lasts.
		SELECT array_agg(u.id ORDER BY u.o) FILTER (WHERE u.known
		    OR u.nth <= lim.max_people - used),
		    array_agg(u.phone) FILTER (WHERE NOT u.known
		    AND u.nth <= lim.max_people - used)
		INTO g, np
		FROM (SELECT u.*, count(*) FILTER (WHERE NOT u.known)
		    OVER (ORDER BY u.o) AS nth
		    FROM (SELECT u.id, u.phone, u.o, k.hit IS NOT NULL
		    OR EXISTS (SELECT 1 FROM inbound_messages i
		    WHERE i.phone = u.phone
		    AND i.phone_number_id = c.phone_number_id
		    AND i.sent_at > t - interval '24 hours') AS known
		    FROM unnest(g, gp) WITH ORDINALITY AS u(id, phone, o)
		    LEFT JOIN LATERAL (SELECT true AS hit FROM limit_contacts k
		    WHERE k.portfolio = pf
		    AND k.phone = u.phone AND k.opened_at > since LIMIT 1) k
		    ON true) u) u;
		IF np IS NOT NULL THEN
			INSERT INTO limit_contacts (portfolio, phone, opened_at)
			SELECT pf, p, t FROM unnest(np) p
			ON CONFLICT (portfolio, phone)
			DO UPDATE SET opened_at = EXCLUDED.opened_at;
			INSERT INTO limit_usage AS u (portfolio, slice, n)
			VALUES (pf, limit_slice(t, lim.period_s),
			    cardinality(np))
			ON CONFLICT (portfolio, slice)
			DO UPDATE SET n = u.n + EXCLUDED.n;
			DELETE FROM limit_usage
			WHERE portfolio = pf
			    AND slice < limit_slice(since, lim.period_s);
		END IF;
		IF g IS NULL THEN
			RETURN;
		END IF;
	END IF;
	RETURN QUERY
	WITH u AS (UPDATE campaign_recipients r SET status = 'sending',
	    attempt = r.attempt + 1, claimed_at = t, claim_token = p_token
	    WHERE r.id = ANY(g) AND r.phase = 0 AND r.status = 'pending'
	    RETURNING r.id, r.attempt, r.phone, r.template_params),
	k AS (INSERT INTO campaign_claims (campaign_id, claimed_at, token, ids,
	    last_at, last_id)
	    SELECT p_campaign, t, p_token, array_agg(u.id), last_at, last_id
	    FROM u HAVING count(*) > 0)
	SELECT * FROM u;
END
$$;

-- wa-throttle --cluster, fair share: reserve is the part of the
-- number's rate kept back for live conversations (--reserve); a drawer
-- is one wa-throttle (host:pid) drawing tokens from the number, with its
-- campaign's weight, counted until until_at (the end of its lease and a
-- little more: it is back for more by then while it has lines).
ALTER TABLE throttle_buckets ADD COLUMN IF NOT EXISTS reserve
	double precision NOT NULL DEFAULT 0
	CHECK (reserve >= 0 AND reserve < 1);

CREATE TABLE IF NOT EXISTS throttle_drawers (
	phone_number_id	text NOT NULL,
	drawer		text NOT NULL,
	weight		integer NOT NULL CHECK (weight BETWEEN 1 AND 1000),
	urgent		boolean NOT NULL DEFAULT false,
	until_at	timestamptz NOT NULL,
	PRIMARY KEY (phone_number_id, drawer)
);

-- As throttle_lease above, for a drawer p_drawer of weight p_weight: the
-- number's rate less its reserve is shared by weight between the drawers
-- counted now (the urgent ones only, while one is counted), and the
-- caller gets its share's worth: n tokens, every_s apart, which take
-- n / (rate less reserve) of the row's time. share: its part (0 to 1) of
-- the rate less the reserve; 0 (while an urgent drawer draws): n = 0,
-- ask again in wait_s. A drawer gone quiet for a minute is forgotten.
CREATE OR REPLACE FUNCTION throttle_lease(p_number text,
    p_seconds double precision, p_rate double precision, p_burst integer,
    p_drawer text, p_weight integer, p_urgent boolean,
    OUT wait_s double precision, OUT n integer,
    OUT every_s double precision, OUT end_s double precision,
    OUT paused_s double precision, OUT cur_rate double precision,
    OUT cur_burst integer, OUT cur_reserve double precision,
    OUT share double precision)
LANGUAGE plpgsql AS $$
DECLARE
	b	throttle_buckets;
	t	timestamptz;
	tau	double precision;
	eff	double precision;	-- the rate less the reserve
	mine	double precision;	-- the caller's share of it
	start	timestamptz;
BEGIN
	INSERT INTO throttle_buckets (phone_number_id, rate, burst, tat)
	VALUES (p_number, p_rate, p_burst, clock_timestamp() +
	    make_interval(secs => (p_burst - 1) / p_rate))
	ON CONFLICT DO NOTHING;
	SELECT * INTO b FROM throttle_buckets
	WHERE phone_number_id = p_number FOR UPDATE;
	t := clock_timestamp();
	DELETE FROM throttle_drawers d WHERE d.phone_number_id = p_number
	    AND d.until_at < t - interval '1 minute';
	SELECT CASE WHEN bool_or(d.urgent) AND NOT p_urgent THEN 0
	    ELSE p_weight::double precision / (p_weight + coalesce(sum(d.weight)
	    FILTER (WHERE d.urgent OR NOT p_urgent), 0)) END INTO share
	FROM throttle_drawers d WHERE d.phone_number_id = p_number
	    AND d.drawer <> p_drawer AND d.until_at > t;
	eff := b.rate * (1 - b.reserve);
	cur_rate := b.rate;
	cur_burst := b.burst;
	cur_reserve := b.reserve;
	paused_s := CASE WHEN b.paused_until > t
	    THEN extract(epoch FROM b.paused_until - t) ELSE 0 END;
	IF share = 0 THEN
		-- Waits for the urgent drawers: asks again in a lease's time.
		wait_s := 2 * p_seconds;
		n := 0;
		every_s := p_seconds;
		end_s := 0;
		INSERT INTO throttle_drawers AS d (phone_number_id, drawer,
		    weight, urgent, until_at)
		VALUES (p_number, p_drawer, p_weight, p_urgent,
		    t + make_interval(secs => p_seconds + 0.5))
		ON CONFLICT (phone_number_id, drawer) DO UPDATE
		SET weight = excluded.weight, urgent = excluded.urgent,
		    until_at = excluded.until_at;
		RETURN;
	END IF;
	mine := eff * share;
	tau := (b.burst - 1) / eff;
	n := greatest(1, ceil(mine * p_seconds))::integer;
	start := greatest(b.tat, t,
	    b.paused_until + make_interval(secs => tau));
	wait_s := extract(epoch FROM start - t) - tau;
	IF wait_s > p_seconds THEN
		n := 0;
	ELSE
		UPDATE throttle_buckets
		SET tat = start + make_interval(secs => n / eff),
		    leases = leases + 1, leased = leased + n, updated_at = t
		WHERE phone_number_id = p_number;
	END IF;
	every_s := 1 / mine;
	end_s := extract(epoch FROM start - t) + n * every_s;
	INSERT INTO throttle_drawers AS d (phone_number_id, drawer, weight,
	    urgent, until_at)
	VALUES (p_number, p_drawer, p_weight, p_urgent,
	    t + make_interval(secs => greatest(end_s, p_seconds) + 0.5))
	ON CONFLICT (phone_number_id, drawer) DO UPDATE
	SET weight = excluded.weight, urgent = excluded.urgent,
	    until_at = excluded.until_at;
END
$$;

-- One wa-campaign run per campaign (version 4): the run that holds it,
-- where (host, boot, pid and that process's start time, against a pid
-- used again) and since when, and its last beat (every 10 s). A row,
-- not a session's advisory lock, so that it holds through a pooler in
-- transaction pooling. See cmd/wa-campaign/runlock.c.
CREATE TABLE IF NOT EXISTS campaign_runs (
	campaign_id	bigint PRIMARY KEY REFERENCES campaigns
			    ON DELETE CASCADE,
	host		text NOT NULL,
	boot_id		text NOT NULL,
	pid		integer NOT NULL,
	pid_start	bigint NOT NULL,
	since		timestamptz NOT NULL DEFAULT now(),
	beat_at		timestamptz NOT NULL DEFAULT now()
);

-- The WhatsApp Business Account whose templates the campaign sends
-- (version 6): wa-campaign check lists them there before anything is
-- sent. NULL: the WA_WABA_ID of whoever checks.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS waba_id text
	CHECK (waba_id ~ '^[0-9]{1,32}$');

-- The shape of the parameters a row's send carries, for wa-campaign
-- check to compare with the template without reading every row: how
-- many body parameters ("body") and their parameter_names, sorted, when
-- any has one ("names"); each header parameter's type, lower case, with
-- "?" after a medium without an id or link ("header"); the indexes of
-- the URL buttons given a parameter ("buttons"). p is template_params:
-- an array of body parameters, or an object with "components" (sent as
-- they are), or with "params" (an array, or an object of named ones).
-- lib/records/template.c's wa_template_shape computes the same in C
-- (wa-fake-api, on a send's body): change both or neither.
CREATE OR REPLACE FUNCTION template_shape(p jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	WITH parts AS (SELECT CASE
	    WHEN jsonb_typeof(p) = 'array' THEN p
	    WHEN jsonb_typeof(p->'components') = 'array' THEN (SELECT CASE
		WHEN jsonb_typeof(c->'parameters') = 'array'
		THEN c->'parameters' ELSE '[]' END
		FROM jsonb_array_elements(p->'components') WITH ORDINALITY
		    e(c, i)
		WHERE lower(c->>'type') = 'body' ORDER BY i LIMIT 1)
	    WHEN jsonb_typeof(p->'params') = 'array' THEN p->'params'
	    WHEN jsonb_typeof(p->'params') = 'object' THEN (SELECT
		coalesce(jsonb_agg(jsonb_build_object('parameter_name', k)),
		'[]') FROM jsonb_object_keys(p->'params') k)
	    END AS body,
	    CASE WHEN jsonb_typeof(p) = 'object'
		AND jsonb_typeof(p->'components') = 'array'
	    THEN (SELECT CASE WHEN jsonb_typeof(c->'parameters') = 'array'
		THEN c->'parameters' END
		FROM jsonb_array_elements(p->'components') WITH ORDINALITY
		    e(c, i)
		WHERE lower(c->>'type') = 'header' ORDER BY i LIMIT 1)
	    END AS header,
	    CASE WHEN jsonb_typeof(p) = 'object'
		AND jsonb_typeof(p->'components') = 'array'
	    THEN p->'components' END AS comps)
	SELECT jsonb_strip_nulls(jsonb_build_object(
	    'body', coalesce(jsonb_array_length(body), 0),
	    'names', (SELECT jsonb_agg(DISTINCT x->>'parameter_name'
		COLLATE "C") FROM jsonb_array_elements(body) x
		WHERE jsonb_typeof(x->'parameter_name') = 'string'),
	    'header', (SELECT jsonb_agg(CASE
		WHEN t IN ('image', 'video', 'document') THEN t || CASE
		    WHEN coalesce(jsonb_typeof(x->t->'id'), 'null') <> 'null'
		    OR coalesce(jsonb_typeof(x->t->'link'), 'null') <> 'null'
		    THEN '' ELSE '?' END
		ELSE t END ORDER BY i)
		FROM jsonb_array_elements(header) WITH ORDINALITY e(x, i),
		LATERAL (SELECT CASE WHEN jsonb_typeof(x->'type') = 'string'
		    THEN left(lower(x->>'type'), 38) ELSE '?' END AS t) l),
	    'buttons', (SELECT jsonb_agg(DISTINCT c->>'index' COLLATE "C")
		FROM jsonb_array_elements(comps) c
		WHERE lower(c->>'type') = 'button'
		    AND lower(c->>'sub_type') = 'url'
		    AND jsonb_typeof(c->'parameters') = 'array'
		    AND c->'parameters' <> '[]'
		    AND (jsonb_typeof(c->'index') = 'string'
		    OR c->>'index' ~ '^-?[0-9]+$'))))
	FROM parts
$$;

-- What a campaign costs (version 5). A message is priced by its
-- template's category and by the market of the number it goes to: one
-- country, or a group of them ("Rest of Latin America"), or "Other" for
-- every country no market lists (Meta's pricing page,
-- developers.facebook.com/documentation/business-messaging/whatsapp/pricing,
-- and its table of country calling codes).
--
-- The country of each recipient: the region its number belongs to
-- (libphonenumber's, found by wa-campaign import; "001" for a number of
-- no country, ZZ for one no plan has), so that the market follows the
-- calling code and, within +1, +7 and a few more, the network prefix
-- (+1 809 is the Dominican Republic). Written once, at import (a row
-- imported before gets it from wa-campaign estimate), in a table of its
-- own: on campaign_recipients, three bytes more a row cost the status
-- path a fifth more WAL, measured (bench/RESULTS.md), as fewer of a
-- row's versions fit on its page.
CREATE TABLE IF NOT EXISTS recipient_countries (
	recipient_id	bigint PRIMARY KEY REFERENCES campaign_recipients (id)
			    ON DELETE CASCADE,
	country		text NOT NULL
);

-- The pricing of the message, as its status webhooks report it: a code
-- of pricing_kinds below (two bytes, no index: the status path writes
-- it in the update it makes anyway), NULL until a status carries one.
ALTER TABLE campaign_recipients ADD COLUMN IF NOT EXISTS pricing smallint;
ALTER TABLE unmatched_statuses ADD COLUMN IF NOT EXISTS pricing smallint;

-- The category of the campaign's template (marketing, utility,
-- authentication, ...), when known: what wa-campaign estimate prices
-- its messages at unless told another.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS template_category text;

-- Every pricing a status webhook can carry, by code: wa-status-ingest
-- (records/status.c) writes the code of the category (1 to 7, 0 for one
-- it does not know), the type (1 to 3, 0 for none) and billable (2 true,
-- 1 false, 0 absent) as category * 16 + type * 4 + billable. billed:
-- whether Meta charges the message when it is delivered (type regular,
-- or no type and billable true); rate: the rate card's category it is
-- charged at.
CREATE TABLE IF NOT EXISTS pricing_kinds (
	code		smallint PRIMARY KEY,
	category	text,
	type		text,
	billable	boolean,
	billed		boolean NOT NULL,
	rate		text
);
INSERT INTO pricing_kinds (code, category, type, billable, billed, rate)
SELECT (c.o - 1) * 16 + (t.o - 1) * 4 + b.o - 1, c.v, t.v, b.v,
    coalesce(t.v = 'regular', b.v, false),
    CASE c.v WHEN 'marketing_lite' THEN 'marketing'
	WHEN 'referral_conversion' THEN NULL ELSE c.v END
FROM unnest(ARRAY[NULL, 'marketing', 'utility', 'authentication',
    'authentication-international', 'service', 'marketing_lite',
    'referral_conversion']) WITH ORDINALITY c(v, o),
    unnest(ARRAY[NULL, 'regular', 'free_customer_service',
    'free_entry_point']) WITH ORDINALITY t(v, o),
    unnest(ARRAY[NULL, false, true]) WITH ORDINALITY b(v, o)
ON CONFLICT (code) DO UPDATE SET category = EXCLUDED.category,
    type = EXCLUDED.type, billable = EXCLUDED.billable,
    billed = EXCLUDED.billed, rate = EXCLUDED.rate;

-- The market of each country (ISO 3166 codes, as libphonenumber names
-- regions), after Meta's table of calling codes; a country not here is
-- in "Other". fallback: the market the country was in before it got a
-- price of its own (1 October 2026: Bangladesh, Iraq, Kazakhstan,
-- Kuwait, Morocco, Nepal, Oman, Sri Lanka, Ukraine), used while the
-- rate card loaded has no row for it. Regions that share a calling code
-- with a market's country are in its market (+44: Jersey, Guernsey and
-- the Isle of Man with the United Kingdom). The map is wapipe's: the
-- schema writes it again each time it is applied.
CREATE TABLE IF NOT EXISTS pricing_markets (
	country		text PRIMARY KEY,
	market		text NOT NULL,
	fallback	text
);
INSERT INTO pricing_markets (country, market, fallback)
SELECT c, m, f FROM (VALUES
	('AR', 'Argentina', NULL), ('BR', 'Brazil', NULL),
	('CL', 'Chile', NULL), ('CO', 'Colombia', NULL),
	('EG', 'Egypt', NULL), ('FR', 'France', NULL),
	('DE', 'Germany', NULL), ('IN', 'India', NULL),
	('ID', 'Indonesia', NULL), ('IL', 'Israel', NULL),
	('IT', 'Italy', NULL), ('VA', 'Italy', NULL),
	('MY', 'Malaysia', NULL), ('MX', 'Mexico', NULL),
	('NL', 'Netherlands', NULL), ('NG', 'Nigeria', NULL),
	('PK', 'Pakistan', NULL), ('PE', 'Peru', NULL),
	('RU', 'Russia', NULL), ('SA', 'Saudi Arabia', NULL),
	('ZA', 'South Africa', NULL), ('ES', 'Spain', NULL),
	('TR', 'Turkey', NULL), ('AE', 'United Arab Emirates', NULL),
	('GB', 'United Kingdom', NULL), ('JE', 'United Kingdom', NULL),
	('GG', 'United Kingdom', NULL), ('IM', 'United Kingdom', NULL),
	('US', 'North America', NULL), ('CA', 'North America', NULL),
	('BD', 'Bangladesh', 'Rest of Asia Pacific'),
	('IQ', 'Iraq', 'Rest of Middle East'),
	('KZ', 'Kazakhstan', 'Other'),
	('KW', 'Kuwait', 'Rest of Middle East'),
	('MA', 'Morocco', 'Rest of Africa'),
	('EH', 'Morocco', 'Rest of Africa'),
	('NP', 'Nepal', 'Rest of Asia Pacific'),
	('OM', 'Oman', 'Rest of Middle East'),
	('LK', 'Sri Lanka', 'Rest of Asia Pacific'),
	('UA', 'Ukraine', 'Rest of Central & Eastern Europe')) v(c, m, f)
UNION ALL
SELECT c, 'Rest of Africa', NULL FROM unnest('{DZ,AO,BJ,BW,BF,BI,CM,TD,
    CG,ER,ET,GA,GM,GH,GW,CI,KE,LS,LR,LY,MG,MW,ML,MR,MZ,NA,NE,RW,SN,SL,SO,
    SS,SD,SZ,TZ,TG,TN,UG,ZM}'::text[]) c
UNION ALL
SELECT c, 'Rest of Asia Pacific', NULL FROM unnest('{AF,AU,CX,CC,KH,CN,HK,
    JP,LA,MN,NZ,PG,PH,SG,TW,TJ,TH,TM,UZ,VN}'::text[]) c
UNION ALL
SELECT c, 'Rest of Central & Eastern Europe', NULL FROM unnest('{AL,AM,AZ,
    BY,BG,HR,CZ,GE,GR,HU,LV,LT,MK,MD,PL,RO,RS,SK,SI}'::text[]) c
UNION ALL
SELECT c, 'Rest of Latin America', NULL FROM unnest('{BO,CR,DO,EC,SV,GT,HT,
    HN,JM,NI,PA,PY,PR,UY,VE}'::text[]) c
UNION ALL
SELECT c, 'Rest of Middle East', NULL FROM unnest('{BH,JO,LB,QA,
    YE}'::text[]) c
UNION ALL
SELECT c, 'Rest of Western Europe', NULL FROM unnest('{AT,BE,DK,FI,AX,IE,
    NO,SJ,PT,SE,CH}'::text[]) c
ON CONFLICT (country) DO UPDATE SET market = EXCLUDED.market,
    fallback = EXCLUDED.fallback;

-- The rate card loaded (wa-campaign rates load): one at a time, its
-- currency (ISO 4217; "$US" on Meta's card is USD), its title line and
-- where it was read from; and its price per market and category
-- (marketing, utility, authentication, authentication-international,
-- service), NULL where the card says n/a: not sold there.
CREATE TABLE IF NOT EXISTS rate_card (
	one		boolean PRIMARY KEY DEFAULT true CHECK (one),
	currency	text NOT NULL,
	title		text,
	file		text NOT NULL,
	loaded_at	timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS rates (
	market		text NOT NULL,
	category	text NOT NULL,
	price		numeric CHECK (price >= 0),
	PRIMARY KEY (market, category)
);

-- The market a country's messages are priced in with the card loaded:
-- its own, or its fallback while the card has no row for its own, or
-- "Other". Called once per country, not per row.
CREATE OR REPLACE FUNCTION pricing_market(p_country text) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT coalesce((SELECT CASE WHEN p.fallback IS NULL OR EXISTS (
	    SELECT 1 FROM rates r WHERE r.market = p.market)
	    OR NOT EXISTS (SELECT 1 FROM rates) THEN p.market
	    ELSE p.fallback END
	    FROM pricing_markets p WHERE p.country = p_country), 'Other')
$$;

-- Inbound messages (issue 25; wa-status-ingest writes them, wa-campaign
-- replies and inbound prune read and delete them). Every message of a
-- "messages" webhook, once: Meta redelivers, and wamid is unique (a
-- message without one is keyed "nowamid:" and the md5 of its JSON). phone
-- is "+" and "from" (NULL for a BSUID-only sender), bsuid its
-- from_user_id; body the text, title, caption or emoji; payload a
-- button's payload, a reply's id, a location's "lat,long"; raw the
-- message as Meta sent it. campaign_id and recipient_id: the row it
-- answers (context.id is its wamid), else the latest row sent to the
-- same phone within the 24 h before it; NULL when neither.
CREATE TABLE IF NOT EXISTS inbound_messages (
	id		bigserial PRIMARY KEY,
	wamid		text NOT NULL UNIQUE,
	phone		text,
	wa_id		text,
	bsuid		text,
	phone_number_id	text,
	type		text NOT NULL,
	body		text,
	payload		text,
	media_id	text,
	context_wamid	text,
	sent_at		timestamptz NOT NULL,
	received_at	timestamptz NOT NULL DEFAULT now(),
	raw		jsonb NOT NULL,
	campaign_id	bigint REFERENCES campaigns (id) ON DELETE SET NULL,
	recipient_id	bigint REFERENCES campaign_recipients (id)
			    ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS inbound_messages_campaign
	ON inbound_messages (campaign_id, sent_at) WHERE campaign_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS inbound_messages_received
	ON inbound_messages (received_at);
-- Whose customer-service window is open: a claim on a limited portfolio
-- does not count a person who wrote to the number in the last 24 hours.
CREATE INDEX IF NOT EXISTS inbound_messages_phone
	ON inbound_messages (phone, sent_at) WHERE phone IS NOT NULL;
-- Where each wa-inbound --cursor NAME is: the last message it wrote
-- (inbound_messages.id) and when it moved.
CREATE TABLE IF NOT EXISTS inbound_cursors (
	name		text PRIMARY KEY,
	last_id		bigint NOT NULL DEFAULT 0,
	updated_at	timestamptz NOT NULL DEFAULT now()
);
-- The attribution of a reply without context: the rows of a phone, found
-- through the phones' table, which is written once, at import. An index
-- on the recipients' phone took an entry at every row version that left
-- its page (the record's, some statuses'): 75 bytes of WAL a message on
-- the record, 50 on the statuses (bench/RESULTS.md, "The phone index
-- written once"). An older database's is dropped above.
CREATE INDEX IF NOT EXISTS campaign_phones_phone ON campaign_phones (phone);
-- How long inbound messages are kept, in days: wa-campaign inbound prune
-- deletes older ones (--days overrides it). One row.
CREATE TABLE IF NOT EXISTS inbound_retention (
	one		boolean PRIMARY KEY DEFAULT true CHECK (one),
	days		integer NOT NULL DEFAULT 30 CHECK (days > 0)
);
INSERT INTO inbound_retention DEFAULT VALUES ON CONFLICT DO NOTHING;

-- What Meta said of the business's templates, account and limits, by
-- webhook (wa-status-ingest: the fields message_template_status_update,
-- template_category_update, account_update, business_capability_update),
-- each change once (key: Meta delivers again), kept whole in detail;
-- event is its event, its new category, or its new limit. What wapipe
-- did of it, the campaigns it paused, is in campaigns.state_reason.
CREATE TABLE IF NOT EXISTS account_events (
	id		bigserial PRIMARY KEY,
	key		text NOT NULL UNIQUE,
	waba_id		text,
	field		text NOT NULL,
	event		text,
	template_name	text,
	template_lang	text,
	detail		jsonb NOT NULL,
	at		timestamptz NOT NULL,
	received_at	timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS account_events_template
	ON account_events (template_name, at) WHERE template_name IS NOT NULL;

-- The people a day a messaging limit as Meta writes it allows: a tier
-- (TIER_250, TIER_2K, ..., the older TIER_50 and TIER_1K), UNLIMITED or
-- TIER_UNLIMITED, or a number (-1 unlimited), as the Graph API's fields
-- and business_capability_update give it (its own docs use all of
-- them). -1: unlimited; 0: not a limit (TIER_NOT_SET, anything else).
CREATE OR REPLACE FUNCTION messaging_tier(v text) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN v ~ '^-?[0-9]{1,9}$'
	    THEN CASE WHEN v::integer < 0 THEN -1 ELSE v::integer END
	    ELSE coalesce((SELECT n FROM (VALUES ('TIER_50', 50),
	    ('TIER_250', 250), ('TIER_1K', 1000), ('TIER_2K', 2000),
	    ('TIER_10K', 10000), ('TIER_100K', 100000),
	    ('TIER_UNLIMITED', -1), ('UNLIMITED', -1)) t(tier, n)
	    WHERE t.tier = v), 0) END
$$;

-- The messages sent to people in a conversation (wa-send's "message"
-- lines: a reply, not a template, to someone whose customer-service
-- window is open), recorded by wa-record, moved by their status webhooks
-- (wa-status-ingest, by wamid) as campaign rows are: status by rank,
-- the error of a failure, the pricing code (pricing_kinds; Meta bills
-- them since 1 October 2026). reply_to is the inbound message answered;
-- campaign_id and recipient_id its attribution, so that the cost of
-- answering a campaign's replies is the campaign's. A send that did not
-- go keeps its wa-send result's error, under a wamid of its own
-- ('unsent:' and the line's md5).
CREATE TABLE IF NOT EXISTS conversation_messages (
	id		bigserial PRIMARY KEY,
	wamid		text NOT NULL UNIQUE,
	phone_number_id	text NOT NULL,
	phone		text NOT NULL,
	type		text NOT NULL,
	message		jsonb NOT NULL,
	reply_to	text,
	status		text NOT NULL,
	status_at	timestamptz NOT NULL DEFAULT now(),
	error_code	integer,
	error_title	text,
	error_class	text,
	pricing		smallint,
	sent_at		timestamptz NOT NULL DEFAULT now(),
	campaign_id	bigint REFERENCES campaigns (id) ON DELETE SET NULL,
	recipient_id	bigint REFERENCES campaign_recipients (id)
			    ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS conversation_messages_campaign
	ON conversation_messages (campaign_id) WHERE campaign_id IS NOT NULL;

-- Last: the version this file brought the database to.
DELETE FROM wapipe_schema;
INSERT INTO wapipe_schema (version) VALUES (10);
