#!/usr/bin/perl
# pgdrop.pl DIR SERVER-SOCKET: a fault proxy for Postgres's wire protocol,
# for tests. Listens on the unix socket DIR/.s.PGSQL.PORT (PORT is
# SERVER-SOCKET's, so libpq reaches it with host=DIR port=PORT) and
# forwards each connection to the server's unix socket SERVER-SOCKET,
# byte for byte, until a statement matches the trigger in DIR/arm.
#
# DIR/arm, one line "NTH COUNT REGEX": the answers of COUNT statements,
# from the NTH (from 1) that matches REGEX, are dropped. It is read again
# whenever it is replaced (write it elsewhere and rename it over): the
# matches are counted from then on. No file, no drops.
#
# A statement is a simple Query message, or an extended-protocol exchange
# up to its Sync that has an Execute; REGEX (Perl, /s) is tried on the
# raw bytes of its messages: Parse holds the statement's name and SQL
# text, Bind the name and the parameters as text. A program that
# prepares its statements (lib/pg/pg.c) sends the SQL only in a Parse
# with a Sync and no Execute, which is never a match: later runs send the
# name alone ("wa_record_apply"); with WA_PG_POOLING=transaction nothing
# is prepared and each run sends the SQL text, so a REGEX that names
# both ("wa_claim|wapipe_claim\(") works either way. Extended messages
# are held back until their Sync (libpq sends them at once); one sent
# after a Flush (pipeline mode) is never a match.
#
# A dropped statement reaches the server, which runs and commits it; its
# answer, up to and including ReadyForQuery, is read and never forwarded.
# Then the server's session is ended first (its socket shut for writing:
# the backend reads the end and exits, releasing its session locks,
# which is seen as its end of the socket, or 10 s pass) and the client's
# connection closed: what a client sees when the primary died after its
# commit reached a standby that is now the primary. With DIR/hold
# present when the answer is complete, both connections stay open and the
# answer unsent until DIR/hold is removed (a test looks at the committed
# rows meanwhile).
#
# DIR/log gets a line per event: "held N NAME" when a drop is held,
# "drop N NAME" once its connections are closed; N counts drops from 1,
# NAME is the statement's (Bind's name, else the start of its SQL). Ends
# cleanly on SIGTERM or SIGINT, removing its socket.
use strict;
use warnings;
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use IO::Select;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);
use Time::HiRes qw(time);

my ($dir, $server) = @ARGV;
die "usage: pgdrop.pl DIR SERVER-SOCKET\n" unless defined $server;
my ($port) = $server =~ /\.s\.PGSQL\.(\d+)$/;
$port //= 5432;
my $path = "$dir/.s.PGSQL.$port";
my $MAX = 1 << 20;	# a side's unsent bytes past which its peer waits

$SIG{PIPE} = 'IGNORE';
my $stop = 0;
$SIG{TERM} = $SIG{INT} = sub { $stop = 1 };

unlink $path;
my $lsn = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => $path,
    Listen => 128) or die "pgdrop: listen on $path: $!\n";
$lsn->blocking(0);
chmod 0777, $path;

my @conns;		# the connections, see accept_one
my $serial = 0;		# connections accepted
my ($armed, $nth, $count, $re, $matches) = ('', 0, 0, undef, 0);
my $drops = 0;

sub logline {
	open my $f, '>>', "$dir/log" or die "pgdrop: $dir/log: $!\n";
	print $f "@_\n";
	close $f;
}

# Reads DIR/arm again when it was replaced: a new trigger, counted anew.
sub arm {
	my @st = stat "$dir/arm";
	my $id = @st ? "$st[1] $st[9]" : '';
	return if $id eq $armed;
	$armed = $id;
	($nth, $count, $re, $matches) = (0, 0, undef, 0);
	return unless @st;
	open my $f, '<', "$dir/arm" or return;
	my $l = <$f> // '';
	close $f;
	chomp $l;
	my ($n, $k, $r) = $l =~ /^\s*(\d+)\s+(\d+)\s+(.+)$/ or do {
		warn "pgdrop: $dir/arm: not \"NTH COUNT REGEX\": $l\n";
		return;
	};
	$re = eval { qr/$r/s } or do {
		warn "pgdrop: $dir/arm: bad regex $r: $@";
		return;
	};
	($nth, $count) = ($n, $k);
}

# The statement's name for the log: Bind's, else the start of its SQL.
sub name_of {
	my ($msgs) = @_;
	my $sql;
	my $at = 0;
	while ($at + 5 <= length $msgs) {
		my ($t, $len) = unpack 'a N', substr($msgs, $at, 5);
		my $body = substr($msgs, $at + 5, $len - 4);
		$at += 1 + $len;
		if ($t eq 'B') {
			my ($portal, $stmt) = unpack 'Z* Z*', $body;
			return $stmt if $stmt ne '';
		} elsif ($t eq 'P') {
			(undef, $sql) = unpack 'Z* Z*', $body;
		} elsif ($t eq 'Q') {
			($sql) = unpack 'Z*', $body;
		}
	}
	$sql //= '?';
	$sql =~ s/\s+/ /g;
	$sql =~ s/[^ -~]/?/g;
	return substr($sql, 0, 60);
}

# A statement is complete (its messages in msgs): 0 to forward its
# answer, or the number of the drop it is.
sub statement {
	my ($msgs) = @_;
	arm();
	return 0 unless defined $re && $msgs =~ $re;
	$matches++;
	return 0 if $matches < $nth || $matches >= $nth + $count;
	return ++$drops;
}

sub accept_one {
	my $c = $lsn->accept or return;
	my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $server);
	if (!$s) {		# the server is down: so is its proxy
		close $c;
		return;
	}
	$c->blocking(0);
	$s->blocking(0);
	push @conns, {
		n => ++$serial,
		c => $c, s => $s,
		cin => '', sin => '',	# read, not yet parsed
		cout => '', sout => '',	# to write to the client, the server
		startup => 1,		# the client's next packet is untyped
		onebyte => 0,		# the server answers SSL/GSS with a byte
		raw => 0,		# not parsed (encrypted, or a cancel)
		group => '', flushed => 0,	# extended messages until Sync
		zs => [0],		# per ReadyForQuery to come: a drop's N
		state => 'open',	# then held, ending, closed
	};
}

# The client's bytes in cin: parsed, held or passed on to the server.
sub from_client {
	my ($k) = @_;
	if ($k->{raw}) {
		$k->{sout} .= $k->{cin};
		$k->{cin} = '';
		return;
	}
	while (1) {
		if ($k->{startup}) {
			last if $k->{onebyte} || length $k->{cin} < 4;
			my $len = unpack 'N', $k->{cin};
			last if length $k->{cin} < $len;
			my $p = substr($k->{cin}, 0, $len, '');
			my $code = $len >= 8 ? unpack('N', substr($p, 4, 4)) : 0;
			$k->{sout} .= $p;
			if ($code == 80877103 || $code == 80877104) {
				$k->{onebyte} = 1;	# SSLRequest, GSSENCRequest
			} elsif ($code == 80877102) {
				$k->{raw} = 1;		# CancelRequest
				$k->{sout} .= $k->{cin};
				$k->{cin} = '';
				last;
			} else {
				$k->{startup} = 0;	# its ReadyForQuery: zs's 0
			}
			next;
		}
		last if length $k->{cin} < 5;
		my ($t, $len) = unpack 'a N', $k->{cin};
		last if length $k->{cin} < 1 + $len;
		my $m = substr($k->{cin}, 0, 1 + $len, '');
		if ($t =~ /^[PBDEC]$/) {
			$k->{group} .= $m;
		} elsif ($t eq 'S') {
			my $g = $k->{group} . $m;
			my $drop = !$k->{flushed} && has_execute($g) ?
			    statement($g) : 0;
			$k->{sout} .= $g;
			push @{$k->{zs}}, $drop ? [$drop, name_of($g)] : 0;
			$k->{group} = '';
			$k->{flushed} = 0;
		} elsif ($t eq 'H') {
			$k->{sout} .= $k->{group} . $m;
			$k->{group} = '';
			$k->{flushed} = 1;
		} elsif ($t eq 'Q') {
			my $drop = statement($m);
			$k->{sout} .= $k->{group} . $m;
			$k->{group} = '';
			push @{$k->{zs}}, $drop ? [$drop, name_of($m)] : 0;
		} else {
			# Terminate, COPY data, a password; a FunctionCall has
			# a ReadyForQuery of its own.
			$k->{sout} .= $k->{group} . $m;
			$k->{group} = '';
			push @{$k->{zs}}, 0 if $t eq 'F';
		}
	}
}

sub has_execute {
	my ($g) = @_;
	my $at = 0;
	while ($at + 5 <= length $g) {
		my ($t, $len) = unpack 'a N', substr($g, $at, 5);
		return 1 if $t eq 'E';
		$at += 1 + $len;
	}
	return 0;
}

# The server's bytes in sin: passed on to the client, or, for a dropped
# statement, kept from it; its ReadyForQuery starts the drop.
sub from_server {
	my ($k) = @_;
	if ($k->{onebyte} && length $k->{sin}) {
		my $b = substr($k->{sin}, 0, 1, '');
		$k->{cout} .= $b;
		$k->{onebyte} = 0;
		$k->{raw} = 1 if $b ne 'N';	# encrypted from now on
	}
	if ($k->{raw}) {
		$k->{cout} .= $k->{sin};
		$k->{sin} = '';
		return;
	}
	while ($k->{state} eq 'open' && length $k->{sin} >= 5) {
		my ($t, $len) = unpack 'a N', $k->{sin};
		last if length $k->{sin} < 1 + $len;
		my $m = substr($k->{sin}, 0, 1 + $len, '');
		my $z = $k->{zs}[0] // 0;
		$k->{cout} .= $m unless $z;
		next unless $t eq 'Z';
		shift @{$k->{zs}};
		next unless $z;
		($k->{drop}, $k->{name}) = @$z;
		$k->{sin} = '';
		if (-e "$dir/hold") {
			$k->{state} = 'held';
			logline("held $k->{drop} $k->{name}");
		} else {
			end_server($k);
		}
	}
}

# The dropped statement's session ends: the backend reads the end of its
# socket and exits; then the client's connection is closed.
sub end_server {
	my ($k) = @_;
	$k->{state} = 'ending';
	$k->{sout} = '';
	$k->{deadline} = time + 10;
	shutdown($k->{s}, 1);
}

# One side has gone: what the other is owed is written, then both closed.
sub drain {
	my ($k) = @_;
	$k->{state} = 'draining';
	$k->{deadline} = time + 10;
}

sub close_conn {
	my ($k) = @_;
	return if $k->{state} eq 'closed';
	close $k->{s};
	close $k->{c};
	logline("drop $k->{drop} $k->{name}") if $k->{drop};
	$k->{state} = 'closed';
}

# Reads what fh has into $k->{$buf}: 1, or 0 at its end or on an error.
sub fill {
	my ($k, $fh, $buf) = @_;
	my $got = sysread($fh, $k->{$buf}, 65536, length $k->{$buf});
	return 1 if !defined $got && ($! == EAGAIN || $! == EWOULDBLOCK ||
	    $! == EINTR);
	return $got ? 1 : 0;
}

# Writes what it can of $k->{$buf} to fh: 1, or 0 on an error.
sub flush {
	my ($k, $fh, $buf) = @_;
	return 1 unless length $k->{$buf};
	my $w = syswrite($fh, $k->{$buf});
	if (!defined $w) {
		return $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
	}
	substr($k->{$buf}, 0, $w, '');
	return 1;
}

# A read on side c or s of k.
sub readable {
	my ($k, $side, $fh) = @_;
	if ($k->{state} eq 'ending') {
		# The end of the backend's session, what it says discarded.
		my $junk = '';
		my $got = sysread($fh, $junk, 65536);
		$k->{sdone} = 1 if defined $got ? $got == 0 :
		    $! != EAGAIN && $! != EWOULDBLOCK && $! != EINTR;
	} elsif ($side eq 'c') {
		return from_client($k) if fill($k, $fh, 'cin');
		# The client has gone: what it sent goes on.
		$k->{sout} .= $k->{group} . $k->{cin};
		$k->{cout} = '';
		drain($k);
	} else {
		my $more = fill($k, $fh, 'sin');
		from_server($k);
		return if $more;
		if ($k->{state} eq 'open') {
			$k->{sout} = '';
			drain($k);
		} else {
			$k->{sdone} = 1;	# a drop: the server went first
		}
	}
}

while (!$stop) {
	my $r = IO::Select->new($lsn);
	my $w = IO::Select->new;
	my $timeout = 1;	# at most: SIGTERM is looked at between waits
	my %of;
	for my $k (@conns) {
		my ($c, $s, $st) = ($k->{c}, $k->{s}, $k->{state});
		$of{fileno $c} = [$k, 'c'];
		$of{fileno $s} = [$k, 's'];
		$w->add($c) if length $k->{cout};
		$w->add($s) if length $k->{sout};
		if ($st eq 'open') {
			$r->add($c) if length $k->{sout} < $MAX;
			$r->add($s) if length $k->{cout} < $MAX;
		} elsif ($st eq 'held') {
			$timeout = 0.05 if $timeout > 0.05;
		} else {
			$r->add($s) if $st eq 'ending' && !$k->{sdone};
			my $left = $k->{deadline} - time;
			$timeout = $left if $timeout > $left;
		}
	}
	$timeout = 0 if $timeout < 0;
	my ($rd, $wr) = IO::Select->select($r, $w, undef, $timeout);
	for my $fh (@{$wr || []}) {
		my ($k, $side) = @{$of{fileno $fh}};
		next if $k->{state} eq 'closed';
		close_conn($k) unless flush($k, $fh,
		    $side eq 'c' ? 'cout' : 'sout');
	}
	for my $fh (@{$rd || []}) {
		if ($fh == $lsn) {
			accept_one();
			next;
		}
		my ($k, $side) = @{$of{fileno $fh}};
		readable($k, $side, $fh) unless $k->{state} eq 'closed';
	}
	for my $k (@conns) {
		my $st = $k->{state};
		if ($st eq 'held') {
			end_server($k) unless -e "$dir/hold";
		} elsif ($st eq 'ending' || $st eq 'draining') {
			# What came before the dropped answer reaches the
			# client first, and the backend has gone.
			close_conn($k) if time >= $k->{deadline} ||
			    !length $k->{cout} && !length $k->{sout} &&
			    ($st eq 'draining' || $k->{sdone});
		}
	}
	@conns = grep { $_->{state} ne 'closed' } @conns;
}
close_conn($_) for @conns;
close $lsn;
unlink $path;
