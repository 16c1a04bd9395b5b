# tests/run.sh: helpers of the tests of wa-campaign run (22, 24), sourced after
# lib.sh and fake.sh: the rows of campaign $c by status, who the fake
# accepted twice, a run's stages, the number's shared bucket.

# count STATUS: campaign $c's rows in STATUS.
count() {
	sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = '$1'"
}
sent_at_least() {
	test "$(count sent)" -ge "$1"
}
# twice: how many recipients the fake accepted more than once.
twice() {
	jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
	    wc -l | tr -d ' '
}
# kids PID: the processes PID started (the run's stages), in $kids.
kids() {
	kids=$(pgrep -P "$1" | tr '\n' ' ')
	[ "$(echo $kids | wc -w)" -ge 4 ]
}
# no_stages: none of $kids is left.
no_stages() {
	for p in $kids; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}
# bucket RATE: the number's bucket, shared by every run of a test, set to
# RATE a second (-r only makes a new bucket). A run to be stopped midway
# goes at 50/s, so that it is still running when it is stopped.
bucket() {
	wa-throttle --number 106540352242922 --set-rate "$1" 2>/dev/null
}
