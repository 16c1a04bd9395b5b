# tests/report.sh: sourced after tests/lib.sh (and pg_start) by the
# report's tests: report_campaign makes a campaign of 12 recipients with
# rows in every status, errors of several classes in their history, a
# pause with its reason and a resume; prints its id.
report_campaign() {
	t_c=$(wa-campaign create --name "report <test> & 'co'" \
	    --phone-number-id 1 --template reminder --max-attempts 3)
	awk 'BEGIN { print "phone,name"; for (i = 1; i <= 12; i++)
	    printf "+120155500%02d,n%d\n", i, i }' >"$T/report-rows.csv"
	wa-campaign import "$t_c" "$T/report-rows.csv" 2>/dev/null
	wa-campaign start --no-check "$t_c"
	wa-campaign pause --reason "halt: 132015 template paused" "$t_c"
	wa-campaign resume "$t_c"
	# Row n: status, attempt, wamid, error, claimed and status_at as
	# seconds before now, next attempt as seconds after.
	sql "update campaign_recipients r set status = v.status,
	    attempt = v.attempt, wamid = v.wamid, error_code = v.code,
	    error_title = v.title,
	    claimed_at = now() - v.claimed * interval '1 second',
	    status_at = now() - v.at * interval '1 second',
	    next_attempt_at = now() + v.later * interval '1 second'
	    from (values
		(1, 'sent', 1, 'w1', null, null, 200, 199, 0),
		(2, 'sent', 1, 'w2', null, null, 150, 149, 0),
		(3, 'delivered', 1, 'w3', null, null, 120, 117, 0),
		(4, 'read', 2, 'w4', null, null, 100, 40, 0),
		(5, 'failed', 1, null, 131026, 'Message undeliverable', 120,
		    119, 0),
		(6, 'failed', 1, 'w6', 131026, 'Message undeliverable', 120,
		    30, 0),
		(7, 'failed', 3, null, 131049, 'Marketing cap', 110, 100, 0),
		(8, 'unknown', 1, null, null, null, 130, 20, 0),
		(9, 'sending', 2, null, null, null, 100, null, 0),
		(10, 'pending', 1, null, 131056, 'Pair rate', 140, 130, 600),
		(11, 'pending', 2, null, 131056, 'Pair rate', 90, 80, 240))
		as v(n, status, attempt, wamid, code, title, claimed, at, later)
	    where r.campaign_id = $t_c
	    and r.phone = '+120155500' || lpad(v.n::text, 2, '0')" >/dev/null
	sql "insert into recipient_errors (recipient_id, attempt, code, class,
	    title) select r.id, v.attempt, v.code, v.class, v.title
	    from campaign_recipients r join (values
		(4, 1, 131000, 'transient', 'Something went wrong'),
		(5, 1, 131026, 'permanent', 'Message undeliverable'),
		(7, 1, 131049, 'later', 'Marketing cap'),
		(7, 2, 131049, 'later', 'Marketing cap'),
		(7, 3, 131049, 'later', 'Marketing cap'),
		(9, 1, 132015, 'fatal', 'Template paused'),
		(10, 1, 131056, 'pair_rate', 'Pair rate'),
		(11, 1, 131056, 'pair_rate', 'Pair rate'),
		(11, 2, 131056, 'pair_rate', 'Pair rate'))
		as v(n, attempt, code, class, title)
	    on r.phone = '+120155500' || lpad(v.n::text, 2, '0')
	    where r.campaign_id = $t_c" >/dev/null
	echo "$t_c"
}
