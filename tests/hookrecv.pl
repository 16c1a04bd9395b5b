#!/usr/bin/perl
# hookrecv.pl PORTFILE DIR [STATUS...]: a webhook receiver for tests.
# Listens on a free port of 127.0.0.1, writes the port to PORTFILE, and
# saves the n-th request (n from 1) as DIR/n.head (request line and
# headers) and DIR/n.body (the raw body), the body first. Answers the n-th request with the n-th STATUS (200 when they run
# out), with the bytes of the file $HOOKRECV_BODY if set (as a canned
# Cloud API answer), and closes every connection after its answer. With $HOOKRECV_HOLD
# set it binds its port but listens only on SIGUSR1: until then the port
# refuses connections (a receiver that is down) and nobody else can take
# it.
use strict;
use warnings;
use IO::Socket::INET;

my ($portfile, $dir, @plan) = @ARGV;
die "usage: hookrecv.pl PORTFILE DIR [STATUS...]\n" unless defined $dir;
my $up = !$ENV{HOOKRECV_HOLD};
$SIG{USR1} = sub { $up = 1 };
$SIG{TERM} = sub { exit 0 };
my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
    LocalPort => 0, Proto => 'tcp')
    or die "hookrecv: bind: $!\n";

sub put {
	my ($path, $data) = @_;
	open my $f, '>', "$path.tmp" or die "hookrecv: $path: $!\n";
	binmode $f;
	print $f $data;
	close $f;
	rename "$path.tmp", $path or die "hookrecv: $path: $!\n";
}

put($portfile, $srv->sockport . "\n");
select(undef, undef, undef, 0.05) until $up;
$srv->listen(128) or die "hookrecv: listen: $!\n";
my $n = 0;
while (my $c = $srv->accept) {
	binmode $c;
	my $head = '';
	while (defined(my $l = <$c>)) {
		last if $l eq "\r\n";
		$head .= $l;
	}
	my ($len) = $head =~ /^content-length:\s*(\d+)/mi;
	my $body = '';
	while (length($body) < ($len // 0)) {
		my $got = read($c, $body, $len - length($body), length($body));
		last unless $got;
	}
	$n++;
	put("$dir/$n.body", $body);
	put("$dir/$n.head", $head);
	my $status = @plan ? shift @plan : 200;
	my $out = '';
	if ($ENV{HOOKRECV_BODY}) {
		open my $b, '<', $ENV{HOOKRECV_BODY}
		    or die "hookrecv: $ENV{HOOKRECV_BODY}: $!\n";
		binmode $b;
		local $/;
		$out = <$b>;
		close $b;
	}
	print $c "HTTP/1.1 $status Test\r\nContent-Length: ", length($out),
	    "\r\nContent-Type: application/json\r\n",
	    "Connection: close\r\n\r\n", $out;
	close $c;
}
