/* date.h: conversion between civil dates and days since 1970-01-01. */
#ifndef DKB_DATE_H
#define DKB_DATE_H

#include <stdint.h>

/* Days since 1970-01-01 of y-m-d (proleptic Gregorian). */
int32_t dkb__days_from_civil(int y, int m, int d);
/* Inverse of dkb__days_from_civil. */
void dkb__civil_from_days(int32_t days, int *y, int *m, int *d);

#endif
