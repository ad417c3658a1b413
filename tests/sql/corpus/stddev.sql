SELECT stddev_samp(l_quantity) FROM lineitem
