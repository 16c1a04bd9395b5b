#!/usr/bin/perl
# loris.pl PORT STATUSFILE MODE:N...: an attacker for tests. Holds N
# connections of each MODE open to 127.0.0.1:PORT, opening a new one
# (after 0.1 s) for each the server closes, until SIGTERM. Modes:
#   idle  connects and sends nothing;
#   slow  sends a request's headers a byte a second, never their end;
#   body  sends the headers of a 3 MiB POST with a signature of the right
#         form, then its body a byte a second.
# Connections come from the addresses in $LORIS_FROM (comma-separated,
# in turn; default 127.0.0.1). Every 0.2 s STATUSFILE gets "OPEN CLOSED
# REFUSED": connections open now, closed by the server after they opened,
# and refused or reset before.
use strict;
use warnings;
use Errno qw(EINPROGRESS EAGAIN EWOULDBLOCK);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use IO::Poll qw(POLLIN POLLOUT POLLERR POLLHUP);
use Socket qw(PF_INET SOCK_STREAM SOL_SOCKET SO_ERROR inet_aton
    pack_sockaddr_in);
use Time::HiRes qw(time);

my ($port, $statusfile, @plan) = @ARGV;
die "usage: loris.pl PORT STATUSFILE MODE:N...\n" unless @plan;
my @from = split /,/, ($ENV{LORIS_FROM} || '127.0.0.1');
my $to = pack_sockaddr_in($port, inet_aton('127.0.0.1'));
my $sig = 'sha256=' . ('0' x 64);
my %first = (
	idle => '',
	slow => "POST /webhook HTTP/1.1\r\nHost: x\r\nX-a: ",
	body => "POST /webhook HTTP/1.1\r\nHost: x\r\n" .
	    "Content-Length: 3145728\r\nX-Hub-Signature-256: $sig\r\n\r\n",
);
my %more = (idle => undef, slow => 'b', body => 'x');
$SIG{PIPE} = 'IGNORE';
my $stop = 0;
$SIG{TERM} = $SIG{INT} = sub { $stop = 1 };

my @slots;	# { mode, fh, state (undef|connecting|open), at }
for (@plan) {
	my ($mode, $n) = /^(idle|slow|body):(\d+)$/ or die "loris: bad $_\n";
	push @slots, { mode => $mode, at => 0 } for 1 .. $n;
}
my ($open, $closed, $refused, $k) = (0, 0, 0, 0);
my $poll = IO::Poll->new;

sub status {
	open my $f, '>', "$statusfile.tmp" or die "loris: $statusfile: $!\n";
	print $f "$open $closed $refused\n";
	close $f;
	rename "$statusfile.tmp", $statusfile;
}

sub drop {
	my ($s, $was_open) = @_;
	$poll->remove($s->{fh});
	close $s->{fh};
	$s->{fh} = undef;
	if ($was_open) {
		$open--;
		$closed++;
	} else {
		$refused++;
	}
	$s->{state} = undef;
	$s->{at} = time + 0.1;
}

sub dial {
	my ($s) = @_;
	my $fh;
	socket($fh, PF_INET, SOCK_STREAM, 0) or return;
	my $src = $from[$k++ % @from];
	bind($fh, pack_sockaddr_in(0, inet_aton($src))) or die "loris: $!\n";
	fcntl($fh, F_SETFL, fcntl($fh, F_GETFL, 0) | O_NONBLOCK);
	$s->{fh} = $fh;
	if (connect($fh, $to) || $! == EINPROGRESS) {
		$s->{state} = 'connecting';
		$poll->mask($fh => POLLOUT);
	} else {
		$refused++;
		close $fh;
		$s->{fh} = undef;
		$s->{at} = time + 0.1;
	}
}

sub opened {
	my ($s) = @_;
	my $e = unpack 'i', getsockopt($s->{fh}, SOL_SOCKET, SO_ERROR);
	if ($e != 0) {
		drop($s, 0);
		return;
	}
	$s->{state} = 'open';
	$open++;
	$poll->mask($s->{fh} => POLLIN);
	syswrite($s->{fh}, $first{$s->{mode}}) if $first{$s->{mode}} ne '';
	$s->{at} = time + 1 + rand;
}

my %by_fh;
my $next_status = 0;
while (!$stop) {
	my $now = time;
	for my $s (@slots) {
		if (!defined $s->{fh}) {
			dial($s) if $now >= $s->{at};
			$by_fh{fileno $s->{fh}} = $s if defined $s->{fh};
		} elsif ($s->{state} eq 'open' && defined $more{$s->{mode}} &&
		    $now >= $s->{at}) {
			my $w = syswrite($s->{fh}, $more{$s->{mode}});
			if (!defined $w && $! != EAGAIN && $! != EWOULDBLOCK) {
				drop($s, 1);
				next;
			}
			$s->{at} = $now + 1;
		}
	}
	$poll->poll(0.05);
	for my $fh ($poll->handles(POLLIN | POLLOUT | POLLERR | POLLHUP)) {
		my $s = $by_fh{fileno $fh} or next;
		next unless defined $s->{fh} && $s->{fh} == $fh;
		if ($s->{state} eq 'connecting') {
			opened($s);
			next;
		}
		my $got = sysread($fh, my $buf, 65536);
		# An answer (a refusal) is followed by the end; wait for it.
		drop($s, 1) if defined $got ? $got == 0 :
		    ($! != EAGAIN && $! != EWOULDBLOCK);
	}
	if ($now >= $next_status) {
		status();
		$next_status = $now + 0.2;
	}
}
status();
