-- in_digit_strings_not.sql: NOT IN over digit strings, with constants of
-- several lengths and a leading zero (not the integer rewrite) beside one
-- that is (same length, no leading zero).
SELECT count(*) AS a,
       count(*) FILTER (WHERE substring(c_phone, 1, 2) NOT IN ('10', '11', '12')) AS b,
       count(*) FILTER (WHERE substring(c_phone, 1, 2) IN ('05', '1', '11')) AS c,
       count(*) FILTER (WHERE substring(c_phone, 4, 3) IN ('100', '200', '300')) AS d
FROM customer
