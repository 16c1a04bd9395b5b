#!/usr/bin/perl
# pngcolours.pl FILE: prints how many distinct colours the PNG FILE has
# (8-bit RGB or RGBA, not interlaced: what Chromium's --screenshot
# writes). A blank page has 1. Exits 1 on a PNG it cannot read.
use strict;
use warnings;
use Compress::Zlib;

my $f = shift or die "usage: pngcolours.pl file.png\n";
open(my $fh, '<:raw', $f) or die "pngcolours: $f: $!\n";
local $/;
my $png = <$fh>;
close $fh;
substr($png, 0, 8) eq "\x89PNG\r\n\x1a\n" or die "pngcolours: $f: not a PNG\n";
my ($pos, $w, $h, $depth, $type, $lace, $idat) = (8, 0, 0, 0, 0, 0, '');
while ($pos < length $png) {
	my ($len, $tag) = unpack('N a4', substr($png, $pos, 8));
	my $data = substr($png, $pos + 8, $len);
	($w, $h, $depth, $type, undef, undef, $lace) = unpack('N N C C C C C',
	    $data) if $tag eq 'IHDR';
	$idat .= $data if $tag eq 'IDAT';
	$pos += 12 + $len;
}
my $bpp = $type == 6 ? 4 : $type == 2 ? 3 : 0;
die "pngcolours: $f: not 8-bit RGB or RGBA\n"
    if $depth != 8 || !$bpp || $lace;
my $raw = uncompress($idat) // die "pngcolours: $f: bad image data\n";
my $stride = $w * $bpp;
my @prev = (0) x $stride;
my %seen;
for my $y (0 .. $h - 1) {
	my $filter = ord substr($raw, $y * ($stride + 1), 1);
	my @cur = unpack('C*', substr($raw, $y * ($stride + 1) + 1, $stride));
	for my $i (0 .. $stride - 1) {
		my $a = $i >= $bpp ? $cur[$i - $bpp] : 0;
		my $b = $prev[$i];
		my $c = $i >= $bpp ? $prev[$i - $bpp] : 0;
		my $p = $filter == 1 ? $a : $filter == 2 ? $b :
		    $filter == 3 ? int(($a + $b) / 2) : $filter == 4 ? do {
			my $q = $a + $b - $c;
			my ($pa, $pb, $pc) = (abs($q - $a), abs($q - $b),
			    abs($q - $c));
			$pa <= $pb && $pa <= $pc ? $a : $pb <= $pc ? $b : $c;
		    } : 0;
		$cur[$i] = ($cur[$i] + $p) & 255;
	}
	$seen{pack('C*', @cur[$_ * $bpp .. $_ * $bpp + $bpp - 1])} = 1
	    for 0 .. $w - 1;
	@prev = @cur;
}
print scalar(keys %seen), "\n";
