-- Feldera's Nexmark queries (benchmark/feldera-sql/benchmarks/nexmark/queries in the Feldera
-- corpus) written for DuckDB, once each: the oracle the nexmark test compares fld's views with.
-- Translations, each in one place:
--   TUMBLE(ts, INTERVAL 'n' SECOND) in GROUP BY  ->  time_bucket(INTERVAL n SECOND, ts)
--   TUMBLE_START / TUMBLE_END                    ->  the bucket / the bucket + the size
--   TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size)) -> every row once per window containing ts:
--       unnest(generate_series(time_bucket(slide, ts) - (size - slide), time_bucket(slide, ts), slide))
--   FORMAT_TIMESTAMP(fmt, ts)                    ->  strftime(ts, fmt)
--   MOD(a, b)                                    ->  a % b
--   AVG over an integer (Feldera keeps the type: truncates) -> SUM(x) // COUNT(x)
--   LEFT ASOF JOIN ... MATCH_CONDITION a >= b ON k = k2 -> ASOF LEFT JOIN ... ON k = k2 AND a >= b
--   re_extract(s, p, g) (q21's Rust UDF: NULL without a match) -> CASE WHEN regexp_matches ...
--   SPLIT(s, sep)[i] (1-based, NULL past the end) -> string_split(s, sep)[i]
--   an alias written 'day'                       ->  "day"
-- Each section starts with `-- query: NAME` (the view the corpus file defines) and holds one
-- SELECT whose columns are the view's, in order.

-- query: q0
SELECT auction, bidder, price, date_time, extra FROM bid;

-- query: q1
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;

-- query: q2
SELECT auction, price FROM bid WHERE auction % 123 = 0;

-- query: q3
SELECT P.name, P.city, P.state, A.id
FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');

-- query: q4
SELECT Q.category, SUM(Q.final) // COUNT(Q.final)
FROM (SELECT MAX(B.price) AS final, A.category
      FROM auction A, bid B
      WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
      GROUP BY A.id, A.category) Q
GROUP BY Q.category;

-- query: q5
WITH hop AS (
  SELECT b.*, ws AS window_start, ws + INTERVAL 10 SECOND AS window_end
  FROM bid b, unnest(generate_series(time_bucket(INTERVAL 2 SECOND, b.date_time) - INTERVAL 8 SECOND,
                                     time_bucket(INTERVAL 2 SECOND, b.date_time), INTERVAL 2 SECOND)) AS w(ws))
SELECT AuctionBids.auction, AuctionBids.num
FROM (SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
      FROM hop GROUP BY auction, window_start, window_end) AS AuctionBids
JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
      FROM (SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
            FROM hop GROUP BY auction, window_start, window_end) AS CountBids
      GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
   AND AuctionBids.num >= MaxBids.maxn;

-- query: q7
SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
FROM bid B
JOIN (SELECT MAX(B1.price) AS maxprice,
             time_bucket(INTERVAL 10 SECOND, B1.date_time) + INTERVAL 10 SECOND AS date_time
      FROM bid B1
      GROUP BY time_bucket(INTERVAL 10 SECOND, B1.date_time)) B1
ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL 10 SECOND AND B1.date_time;

-- query: q8
SELECT P.id, P.name, P.starttime
FROM (SELECT P.id, P.name, time_bucket(INTERVAL 10 SECOND, P.date_time) AS starttime,
             time_bucket(INTERVAL 10 SECOND, P.date_time) + INTERVAL 10 SECOND AS endtime
      FROM person P
      GROUP BY P.id, P.name, time_bucket(INTERVAL 10 SECOND, P.date_time)) P
JOIN (SELECT A.seller, time_bucket(INTERVAL 10 SECOND, A.date_time) AS starttime,
             time_bucket(INTERVAL 10 SECOND, A.date_time) + INTERVAL 10 SECOND AS endtime
      FROM auction A
      GROUP BY A.seller, time_bucket(INTERVAL 10 SECOND, A.date_time)) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;

-- query: q9
SELECT id, itemName, description, initialBid, reserve, date_time, expires, seller, category, extra,
       auction, bidder, price, bid_dateTime, bid_extra
FROM (SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_dateTime, B.extra AS bid_extra,
             ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum
      FROM auction A, bid B
      WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires)
WHERE rownum <= 1;

-- query: q10
SELECT auction, bidder, price, date_time, extra, strftime(date_time, '%Y-%m-%d'), strftime(date_time, '%H:%M')
FROM bid;

-- query: q12
SELECT B.bidder, count(*) AS bid_count, time_bucket(INTERVAL 10 SECOND, B.date_time) AS starttime,
       time_bucket(INTERVAL 10 SECOND, B.date_time) + INTERVAL 10 SECOND AS endtime
FROM bid B
GROUP BY B.bidder, time_bucket(INTERVAL 10 SECOND, B.date_time);

-- query: q13
SELECT B.auction, B.bidder, B.price, B.date_time, S.value
FROM (SELECT *, date_time AS p_time, auction % 10000 AS mod FROM bid) B
ASOF LEFT JOIN side_input AS S ON B.mod = S.key AND B.p_time >= S.date_time;

-- query: q14
SELECT auction, bidder, 0.908 * price AS price,
       CASE WHEN hour(date_time) >= 8 AND hour(date_time) <= 18 THEN 'dayTime'
            WHEN hour(date_time) <= 6 OR hour(date_time) >= 20 THEN 'nightTime'
            ELSE 'otherTime' END AS bidTimeType,
       date_time, extra,
       CAST(length(extra) - length(replace(extra, 'c', '')) AS INTEGER) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;

-- query: q15
SELECT CAST(date_time AS DATE) AS "day",
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       count(DISTINCT bidder) AS total_bidders,
       count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
       count(DISTINCT auction) AS total_auctions,
       count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid
GROUP BY CAST(date_time AS DATE);

-- query: q16
SELECT channel, CAST(date_time AS DATE) AS "day", strftime(max(date_time), '%H:%M') AS "minute",
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       count(DISTINCT bidder) AS total_bidders,
       count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
       count(DISTINCT auction) AS total_auctions,
       count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid
GROUP BY channel, CAST(date_time AS DATE);

-- query: q17
SELECT auction, CAST(date_time AS DATE) AS "day",
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       min(price) AS min_price, max(price) AS max_price,
       sum(price) // count(price) AS avg_price, sum(price) AS sum_price
FROM bid
GROUP BY auction, CAST(date_time AS DATE);

-- query: q18
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number FROM bid)
WHERE rank_number <= 1;

-- query: q19
SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
WHERE rank_number <= 10;

-- query: q20
SELECT auction, bidder, price, channel, url, B.date_time, B.extra,
       itemName, description, initialBid, reserve, A.date_time AS AdateTime, expires, seller, category,
       A.extra AS Aextra
FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id
WHERE A.category = 10;

-- query: q21
SELECT auction, bidder, price, channel,
       CASE WHEN lower(channel) = 'apple' THEN '0'
            WHEN lower(channel) = 'google' THEN '1'
            WHEN lower(channel) = 'facebook' THEN '2'
            WHEN lower(channel) = 'baidu' THEN '3'
            ELSE CASE WHEN regexp_matches(url, '(&|^)channel_id=([^&]*)')
                      THEN regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END
       END AS channel_id
FROM bid
WHERE lower(channel) IN ('apple', 'google', 'facebook', 'baidu')
   OR regexp_matches(url, '(&|^)channel_id=([^&]*)');

-- query: q22
SELECT auction, bidder, price, channel,
       string_split(url, '/')[3 + 1] AS dir1,
       string_split(url, '/')[4 + 1] AS dir2,
       string_split(url, '/')[5 + 1] AS dir3
FROM bid;
