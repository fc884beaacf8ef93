;; Books as JSON from their compact encoding (book-codec.ts): the fast path of book-json.ts, as
;; WebAssembly. The same bytes as writeBooksJson's JavaScript for the books it takes: sizes of two
;; decimals up to 2^31 - 1 hundredths, prices of at most four decimals within 0..1 (those Polymarket
;; sends); for any other book it answers -1 and the JavaScript writes it (or rejects it). Compiled to
;; book-json-wasm-binary.ts by `npm run wasm`; book-json-wasm.ts lays out its memory and calls it.
;;
;; Memory:
;;   WHOLE       0       10,000 little-endian words: 0..9999 in decimal, zero-padded
;;   WHOLE_LEN   40000   their lengths (bytes)
;;   CENTS       50000   100 words: `}`, `.5}`, `.05}`, `.25}`: hundredths with the level's brace
;;   CENTS_LEN   50400   their lengths
;;   PRICES      50512   per price decimals 0..4, four words: its head table's address, its lengths'
;;                       address, its last tick, and 10^decimals; a head table holds per tick six
;;                       words of `,{"price":P,"size":`, its lengths a byte per tick (0: the head is
;;                       longer than the words)
;;   KEEP        50592   two words: where a mirrored book's Up bids and Up asks are kept ($side)
;;   TAIL        50600   `seconds`' texts: six words (addresses and lengths of `,"orderbook_up":`,
;;                       `,"orderbook_down":` and the empty books), then the texts
;;   the tables, kept sides, inputs and outputs: where the host puts them (from 51200)
(module
  (memory (export "memory") 1)
  ;; Where the blob was read to, between the sides.
  (global $src (mut i32) (i32.const 0))
  ;; Where the Up book ends in the output (where `between` starts).
  (global $mid (export "mid") (mut i32) (i32.const 0))
  ;; When `seconds` answers -1: how many seconds it wrote whole, and where their bytes end.
  (global $secondsDone (export "secondsDone") (mut i32) (i32.const 0))
  (global $secondsEnd (export "secondsEnd") (mut i32) (i32.const 0))

  ;; One side as a JSON array of levels: reads from $src, writes at $q; answers the end of what it
  ;; wrote, or -1 for a side the JavaScript must write (or reject). With $keep (not 0), it also keeps
  ;; the side's levels there for $mirror: the count, then per level 24 bytes (its tick, the length of
  ;; its size text, and that text, `}` included, in 16 bytes).
  (func $side (param $end i32) (param $q i32) (param $desc i32) (param $flip i32)
              (param $tbl i32) (param $lens i32) (param $last i32) (param $keep i32) (result i32)
    (local $p i32) (local $n i32) (local $i i32) (local $b i32) (local $step i32)
    (local $units i32) (local $prev i32) (local $shown i32) (local $len i32) (local $k i32)
    (local $whole i32) (local $cents i32) (local $start i32) (local $e i32) (local $size i32)
    (local $kept i32) (local $text i64)
    (local.set $p (global.get $src))
    ;; the level count (one or two bytes; a larger count is not a book this path takes)
    (local.set $b (i32.load8_u (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (local.set $n (i32.and (local.get $b) (i32.const 127)))
    (if (i32.ge_u (local.get $b) (i32.const 128)) (then
      (local.set $b (i32.load8_u (local.get $p)))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (if (i32.ge_u (local.get $b) (i32.const 128)) (then (return (i32.const -1))))
      (local.set $n (i32.or (local.get $n) (i32.shl (local.get $b) (i32.const 7))))))
    ;; every level takes at least two bytes of the blob
    (if (i32.gt_u (i32.shl (local.get $n) (i32.const 1)) (i32.sub (local.get $end) (local.get $p)))
      (then (return (i32.const -1))))
    (local.set $start (local.get $q))
    (if (local.get $keep) (then (i32.store (local.get $keep) (local.get $n))))
    (local.set $kept (i32.add (local.get $keep) (i32.const 8)))
    (block $done
      (loop $level
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        ;; the price step
        (local.set $b (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $step (i32.and (local.get $b) (i32.const 127)))
        (if (i32.ge_u (local.get $b) (i32.const 128)) (then
          (local.set $b (i32.load8_u (local.get $p)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (local.set $step (i32.or (local.get $step)
            (i32.shl (i32.and (local.get $b) (i32.const 127)) (i32.const 7))))
          (if (i32.ge_u (local.get $b) (i32.const 128)) (then
            (local.set $b (i32.load8_u (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (local.set $step (i32.or (local.get $step)
              (i32.shl (i32.and (local.get $b) (i32.const 127)) (i32.const 14))))
            (if (i32.ge_u (local.get $b) (i32.const 128)) (then (return (i32.const -1))))))))
        ;; the size in hundredths
        (local.set $b (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $units (i32.and (local.get $b) (i32.const 127)))
        (if (i32.ge_u (local.get $b) (i32.const 128)) (then
          (local.set $b (i32.load8_u (local.get $p)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (local.set $units (i32.or (local.get $units)
            (i32.shl (i32.and (local.get $b) (i32.const 127)) (i32.const 7))))
          (if (i32.ge_u (local.get $b) (i32.const 128)) (then
            (local.set $b (i32.load8_u (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (local.set $units (i32.or (local.get $units)
              (i32.shl (i32.and (local.get $b) (i32.const 127)) (i32.const 14))))
            (if (i32.ge_u (local.get $b) (i32.const 128)) (then
              (local.set $b (i32.load8_u (local.get $p)))
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (local.set $units (i32.or (local.get $units)
                (i32.shl (i32.and (local.get $b) (i32.const 127)) (i32.const 21))))
              (if (i32.ge_u (local.get $b) (i32.const 128)) (then
                ;; a fifth byte: sizes up to 2^31 - 1 hundredths (21,474,836.47), as the JavaScript
                ;; prints from integers; larger ones are its to print
                (local.set $b (i32.load8_u (local.get $p)))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (if (i32.ge_u (local.get $b) (i32.const 8)) (then (return (i32.const -1))))
                (local.set $units (i32.or (local.get $units)
                  (i32.shl (local.get $b) (i32.const 28))))))))))))
        ;; the tick: the first level's step is from 0, the others' from the level before
        (local.set $prev
          (if (result i32) (i32.eqz (local.get $i))
            (then (local.get $step))
            (else (if (result i32) (local.get $desc)
              (then (i32.sub (local.get $prev) (local.get $step)))
              (else (i32.add (local.get $prev) (local.get $step)))))))
        (local.set $shown
          (if (result i32) (local.get $flip)
            (then (i32.sub (local.get $flip) (local.get $prev)))
            (else (local.get $prev))))
        ;; a tick outside the table (negative ones are large unsigned) is the JavaScript's
        (if (i32.gt_u (local.get $shown) (local.get $last)) (then (return (i32.const -1))))
        (local.set $len (i32.load8_u (i32.add (local.get $lens) (local.get $shown))))
        (if (i32.eqz (local.get $len)) (then (return (i32.const -1))))
        (local.set $k (i32.add (local.get $tbl) (i32.mul (local.get $shown) (i32.const 24))))
        (i64.store (local.get $q) (i64.load (local.get $k)))
        (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $k)))
        (i64.store offset=16 (local.get $q) (i64.load offset=16 (local.get $k)))
        (local.set $q (i32.add (local.get $q) (local.get $len)))
        (local.set $whole (i32.div_u (local.get $units) (i32.const 100)))
        (local.set $cents (i32.sub (local.get $units) (i32.mul (local.get $whole) (i32.const 100))))
        (if (i32.lt_u (local.get $whole) (i32.const 10000))
          (then
            ;; the size's text in one word of eight bytes: the whole part's digits (zero-padded in
            ;; the table), then the hundredths and the brace; kept from the word, not read back
            ;; from the output (a load over the two fresh stores would wait for them)
            (local.set $len (i32.load8_u offset=40000 (local.get $whole)))
            (local.set $text (i64.or
              (i64.extend_i32_u (i32.load (i32.shl (local.get $whole) (i32.const 2))))
              (i64.shl
                (i64.extend_i32_u (i32.load offset=50000 (i32.shl (local.get $cents) (i32.const 2))))
                (i64.extend_i32_u (i32.shl (local.get $len) (i32.const 3))))))
            (local.set $len (i32.add (local.get $len) (i32.load8_u offset=50400 (local.get $cents))))
            (i64.store (local.get $q) (local.get $text))
            (if (local.get $keep) (then
              (i32.store (local.get $kept) (local.get $prev))
              (i32.store offset=4 (local.get $kept) (local.get $len))
              (i64.store offset=8 (local.get $kept) (local.get $text))
              (local.set $kept (i32.add (local.get $kept) (i32.const 24)))))
            (local.set $q (i32.add (local.get $q) (local.get $len))))
          (else
            ;; 10000 and up (below 2^31 / 100: at most eight digits), written from the end
            (local.set $size (local.get $q))
            (local.set $len (i32.const 5))
            (if (i32.ge_u (local.get $whole) (i32.const 100000)) (then (local.set $len (i32.const 6))))
            (if (i32.ge_u (local.get $whole) (i32.const 1000000)) (then (local.set $len (i32.const 7))))
            (if (i32.ge_u (local.get $whole) (i32.const 10000000)) (then (local.set $len (i32.const 8))))
            (local.set $q (i32.add (local.get $q) (local.get $len)))
            (local.set $e (local.get $q))
            (loop $digit
              (local.set $e (i32.sub (local.get $e) (i32.const 1)))
              (i32.store8 (local.get $e) (i32.add (i32.const 48) (i32.rem_u (local.get $whole) (i32.const 10))))
              (local.set $whole (i32.div_u (local.get $whole) (i32.const 10)))
              (br_if $digit (i32.ne (local.get $e) (i32.sub (local.get $q) (local.get $len)))))
            (i32.store (local.get $q) (i32.load offset=50000 (i32.shl (local.get $cents) (i32.const 2))))
            (local.set $q (i32.add (local.get $q) (i32.load8_u offset=50400 (local.get $cents))))
            (if (local.get $keep) (then
              (i32.store (local.get $kept) (local.get $prev))
              (i32.store offset=4 (local.get $kept) (i32.sub (local.get $q) (local.get $size)))
              (i64.store offset=8 (local.get $kept) (i64.load (local.get $size)))
              (i64.store offset=16 (local.get $kept) (i64.load offset=8 (local.get $size)))
              (local.set $kept (i32.add (local.get $kept) (i32.const 24)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $level)))
    ;; the first level's comma is the array's `[`; an empty side is `[]`
    (i32.store8 (local.get $start) (i32.const 91))
    (if (i32.eqz (local.get $n)) (then (local.set $q (i32.add (local.get $q) (i32.const 1)))))
    (i32.store8 (local.get $q) (i32.const 93))
    ;; a blob that ends inside the side is the JavaScript's to reject
    (if (i32.gt_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
    (global.set $src (local.get $p))
    (i32.add (local.get $q) (i32.const 1)))

  ;; A side kept by $side written again as the other token's: each price as $one - tick, in the same
  ;; order (the Down bids are the Up asks at 1 - p, the Down asks the Up bids). Answers the end of what
  ;; it wrote, or -1.
  (func $mirror (param $keep i32) (param $q i32) (param $one i32)
                (param $tbl i32) (param $lens i32) (param $last i32) (result i32)
    (local $n i32) (local $i i32) (local $r i32) (local $shown i32) (local $len i32) (local $k i32)
    (local $start i32)
    (local.set $n (i32.load (local.get $keep)))
    (local.set $r (i32.add (local.get $keep) (i32.const 8)))
    (local.set $start (local.get $q))
    (block $done
      (loop $level
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $shown (i32.sub (local.get $one) (i32.load (local.get $r))))
        (if (i32.gt_u (local.get $shown) (local.get $last)) (then (return (i32.const -1))))
        (local.set $len (i32.load8_u (i32.add (local.get $lens) (local.get $shown))))
        (if (i32.eqz (local.get $len)) (then (return (i32.const -1))))
        (local.set $k (i32.add (local.get $tbl) (i32.mul (local.get $shown) (i32.const 24))))
        (i64.store (local.get $q) (i64.load (local.get $k)))
        (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $k)))
        (i64.store offset=16 (local.get $q) (i64.load offset=16 (local.get $k)))
        (local.set $q (i32.add (local.get $q) (local.get $len)))
        (i64.store (local.get $q) (i64.load offset=8 (local.get $r)))
        (i64.store offset=8 (local.get $q) (i64.load offset=16 (local.get $r)))
        (local.set $q (i32.add (local.get $q) (i32.load offset=4 (local.get $r))))
        (local.set $r (i32.add (local.get $r) (i32.const 24)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $level)))
    (i32.store8 (local.get $start) (i32.const 91))
    (if (i32.eqz (local.get $n)) (then (local.set $q (i32.add (local.get $q) (i32.const 1)))))
    (i32.store8 (local.get $q) (i32.const 93))
    (i32.add (local.get $q) (i32.const 1)))

  ;; Both books: `{"bids":[..],"asks":[..]}`, `between`, `{"bids":[..],"asks":[..]}`, from the blob at
  ;; [$blob, $end) (flags and decimals included) to $q. Answers the output's end, or -1.
  (func $books (export "books") (param $blob i32) (param $end i32) (param $q i32)
        (param $between i32) (param $betweenLen i32) (result i32)
    (local $mirrored i32) (local $pd i32) (local $d i32)
    (local $tbl i32) (local $lens i32) (local $last i32) (local $one i32)
    (local $keepBids i32) (local $keepAsks i32)
    ;; sizes of two decimals and prices of at most four, or the JavaScript's
    (if (i32.lt_u (i32.sub (local.get $end) (local.get $blob)) (i32.const 2)) (then (return (i32.const -1))))
    (if (i32.ne (i32.shr_u (i32.load8_u offset=1 (local.get $blob)) (i32.const 4)) (i32.const 2))
      (then (return (i32.const -1))))
    (local.set $pd (i32.and (i32.load8_u offset=1 (local.get $blob)) (i32.const 15)))
    (if (i32.gt_u (local.get $pd) (i32.const 4)) (then (return (i32.const -1))))
    (local.set $d (i32.add (i32.const 50512) (i32.shl (local.get $pd) (i32.const 4))))
    (local.set $tbl (i32.load (local.get $d)))
    (local.set $lens (i32.load offset=4 (local.get $d)))
    (local.set $last (i32.load offset=8 (local.get $d)))
    (local.set $one (i32.load offset=12 (local.get $d)))
    (local.set $mirrored (i32.and (i32.load8_u (local.get $blob)) (i32.const 1)))
    ;; a mirrored book's Up sides are kept to write the Down book from without reading them again
    (if (local.get $mirrored) (then
      (local.set $keepBids (i32.load (i32.const 50592)))
      (local.set $keepAsks (i32.load (i32.const 50596)))))
    (global.set $src (i32.add (local.get $blob) (i32.const 2)))
    (i64.store (local.get $q) (i64.const 0x3a2273646962227b)) ;; {"bids":
    (local.set $q (call $side (local.get $end) (i32.add (local.get $q) (i32.const 8)) (i32.const 1)
      (i32.const 0) (local.get $tbl) (local.get $lens) (local.get $last) (local.get $keepBids)))
    (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
    (i64.store (local.get $q) (i64.const 0x3a22736b7361222c)) ;; ,"asks":
    (local.set $q (call $side (local.get $end) (i32.add (local.get $q) (i32.const 8)) (i32.const 0)
      (i32.const 0) (local.get $tbl) (local.get $lens) (local.get $last) (local.get $keepAsks)))
    (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
    (i32.store8 (local.get $q) (i32.const 125))
    (local.set $q (i32.add (local.get $q) (i32.const 1)))
    (global.set $mid (local.get $q))
    (memory.copy (local.get $q) (local.get $between) (local.get $betweenLen))
    (local.set $q (i32.add (local.get $q) (local.get $betweenLen)))
    (i64.store (local.get $q) (i64.const 0x3a2273646962227b))
    (local.set $q (i32.add (local.get $q) (i32.const 8)))
    (if (local.get $mirrored)
      (then
        ;; Down bids are the Up asks at 1 - p, Down asks the Up bids at 1 - p, in the same order.
        (local.set $q (call $mirror (local.get $keepAsks) (local.get $q) (local.get $one)
          (local.get $tbl) (local.get $lens) (local.get $last)))
        (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
        (i64.store (local.get $q) (i64.const 0x3a22736b7361222c))
        (local.set $q (call $mirror (local.get $keepBids) (i32.add (local.get $q) (i32.const 8))
          (local.get $one) (local.get $tbl) (local.get $lens) (local.get $last))))
      (else
        (local.set $q (call $side (local.get $end) (local.get $q) (i32.const 1)
          (i32.const 0) (local.get $tbl) (local.get $lens) (local.get $last) (i32.const 0)))
        (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
        (i64.store (local.get $q) (i64.const 0x3a22736b7361222c))
        (local.set $q (call $side (local.get $end) (i32.add (local.get $q) (i32.const 8)) (i32.const 0)
          (i32.const 0) (local.get $tbl) (local.get $lens) (local.get $last) (i32.const 0)))))
    (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
    (i32.store8 (local.get $q) (i32.const 125))
    (i32.add (local.get $q) (i32.const 1)))

  ;; Snapshots with their books, as a page writes them: per second, a comma (before all but the
  ;; first, and before the first too when $comma), the head (its JSON up to the closing brace), then
  ;; `,"orderbook_up":`, the books with `,"orderbook_down":` between, and the brace; or, for a second
  ;; without books, the empty books and the brace. $spans holds per second four addresses: the head's
  ;; start and end, the blob's start and end. $tail holds the three texts' addresses and lengths (up,
  ;; down, empty). Answers the output's end, or -1 when a blob is the JavaScript's, with the seconds
  ;; before it (whole, their bytes up to $secondsEnd) counted in $secondsDone.
  (func (export "seconds") (param $spans i32) (param $count i32) (param $q i32) (param $comma i32)
        (param $tail i32) (result i32)
    (local $k i32) (local $s i32) (local $hs i32) (local $he i32) (local $bs i32) (local $be i32)
    (local $at i32)
    (block $done
      (loop $second
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (local.set $at (local.get $q))
        (if (i32.or (local.get $k) (local.get $comma)) (then
          (i32.store8 (local.get $q) (i32.const 44))
          (local.set $q (i32.add (local.get $q) (i32.const 1)))))
        (local.set $s (i32.add (local.get $spans) (i32.shl (local.get $k) (i32.const 4))))
        (local.set $hs (i32.load (local.get $s)))
        (local.set $he (i32.load offset=4 (local.get $s)))
        (local.set $bs (i32.load offset=8 (local.get $s)))
        (local.set $be (i32.load offset=12 (local.get $s)))
        (memory.copy (local.get $q) (local.get $hs) (i32.sub (local.get $he) (local.get $hs)))
        (local.set $q (i32.add (local.get $q) (i32.sub (local.get $he) (local.get $hs))))
        (if (i32.gt_u (local.get $be) (local.get $bs))
          (then
            (memory.copy (local.get $q) (i32.load (local.get $tail)) (i32.load offset=4 (local.get $tail)))
            (local.set $q (call $books (local.get $bs) (local.get $be)
              (i32.add (local.get $q) (i32.load offset=4 (local.get $tail)))
              (i32.load offset=8 (local.get $tail)) (i32.load offset=12 (local.get $tail))))
            (if (i32.lt_s (local.get $q) (i32.const 0)) (then
              (global.set $secondsDone (local.get $k))
              (global.set $secondsEnd (local.get $at))
              (return (i32.const -1))))
            (i32.store8 (local.get $q) (i32.const 125))
            (local.set $q (i32.add (local.get $q) (i32.const 1))))
          (else
            (memory.copy (local.get $q) (i32.load offset=16 (local.get $tail)) (i32.load offset=20 (local.get $tail)))
            (local.set $q (i32.add (local.get $q) (i32.load offset=20 (local.get $tail))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $second)))
    (local.get $q))
)
