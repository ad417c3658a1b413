SELECT count(*) FROM nation WHERE n_comment IS NOT NULL
