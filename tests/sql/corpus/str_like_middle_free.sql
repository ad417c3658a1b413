SELECT count(*) FROM orders WHERE o_comment LIKE '%special%requests%'
