. "$(dirname "$0")/lib.sh"
pg_start
c=$(campaign 20)
sql "update campaign_recipients set template_params =
    jsonb_build_array(repeat('x', 3000)) where campaign_id = $c"
mkfifo "$T/fifo"
wa-claim -c "$c" -n 20 >"$T/fifo" 2>"$T/err" &
claimer=$!
exec 3<"$T/fifo"
sleep 1
ps -o pid,ppid,pgid,stat,wchan:20,cmd -g $$ 
echo claimer=$claimer self=$$
kill -TERM "$claimer"
wait "$claimer"
echo rc=$?
cat $T/err
done_testing
