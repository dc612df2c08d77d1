package clock

import "time"

// DayStart returns the first instant of the date y-m-d in loc (d may be
// out of its month's range: time.Date's normalizing makes a date of it):
// its midnight, or, where a daylight-saving change skips midnight
// (America/Santiago on the first Sunday of September, Asia/Beirut), the
// first hour after the gap. time.Date alone does not promise which side of
// a skipped time it returns, and in Santiago it returns 23:00 of the day
// before: a daily reset worked out with it came before the instant it was
// worked out from. Quota windows and the emulator's daily caps reset here.
func DayStart(y int, m time.Month, d int, loc *time.Location) time.Time {
	ty, tm, td := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Date()
	t := time.Date(ty, tm, td, 0, 0, 0, 0, loc)
	for h := 1; h <= 3; h++ {
		if gy, gm, gd := t.In(loc).Date(); gy == ty && gm == tm && gd == td {
			break
		}
		t = time.Date(ty, tm, td, h, 0, 0, 0, loc)
	}
	return t
}
