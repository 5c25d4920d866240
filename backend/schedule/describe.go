package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Describe says in words when a cron expression fires, e.g. "Every weekday
// at 09:00". It knows the common shapes (every N minutes, hourly, daily,
// weekly, monthly, yearly, at one or more set times) and returns the
// expression itself for anything else. The time zone is not part of it.
func Describe(expr string) string {
	stored, fields, err := normalizeCron(expr)
	if err != nil {
		return strings.TrimSpace(expr)
	}
	f := strings.Fields(fields)
	if len(f) != 5 {
		return stored
	}
	if d := describe(f[0], f[1], f[2], f[3], f[4]); d != "" {
		return d
	}
	return stored
}

func describe(min, hour, dom, month, dow string) string {
	anyDay := dom == "*" && month == "*" && dow == "*"
	switch {
	case min == "*" && hour == "*" && anyDay:
		return "Every minute"
	case strings.HasPrefix(min, "*/") && hour == "*" && anyDay:
		if n, ok := number(min[2:], 1, 59); ok {
			return plural(n, "Every minute", "Every %d minutes")
		}
		return ""
	}
	m, ok := number(min, 0, 59)
	if !ok {
		return ""
	}
	switch {
	case hour == "*" && anyDay:
		if m == 0 {
			return "Every hour, on the hour"
		}
		return fmt.Sprintf("Every hour at :%02d", m)
	case strings.HasPrefix(hour, "*/") && anyDay:
		n, ok := number(hour[2:], 1, 23)
		if !ok {
			return ""
		}
		return plural(n, "Every hour", "Every %d hours") + fmt.Sprintf(" at :%02d", m)
	}
	at := clockTimes(m, hour)
	if at == "" {
		return ""
	}
	switch {
	case anyDay:
		return "Every day at " + at
	case dom == "*" && month == "*":
		days := weekdays(dow)
		if days == "" {
			return ""
		}
		return days + " at " + at
	case dow == "*" && month == "*":
		d, ok := number(dom, 1, 31)
		if !ok {
			return ""
		}
		return fmt.Sprintf("On the %s of every month at %s", ordinal(d), at)
	case dow == "*":
		d, ok := number(dom, 1, 31)
		mo, ok2 := monthNumber(month)
		if !ok || !ok2 {
			return ""
		}
		return fmt.Sprintf("Every year on %d %s at %s", d, time.Month(mo), at)
	}
	return ""
}

// clockTimes renders minute m at each hour of a list ("9" or "9,17") as
// "09:00" or "09:00 and 17:00"; "" when the hour field is anything else.
func clockTimes(m int, hours string) string {
	var out []string
	for _, h := range strings.Split(hours, ",") {
		n, ok := number(h, 0, 23)
		if !ok || len(out) == 6 {
			return ""
		}
		out = append(out, fmt.Sprintf("%02d:%02d", n, m))
	}
	return list(out)
}

var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// weekdays renders a day-of-week field: "Every weekday", "Every Monday and
// Thursday"; "" when it is not a plain list of days.
func weekdays(dow string) string {
	switch strings.ToLower(dow) {
	case "1-5", "mon-fri":
		return "Every weekday"
	case "0,6", "6,0", "sat,sun", "sun,sat":
		return "Every Saturday and Sunday"
	}
	var names []string
	for _, d := range strings.Split(dow, ",") {
		n, ok := dayNames[strings.ToLower(d)]
		if !ok {
			if n, ok = number(d, 0, 6); !ok {
				return ""
			}
		}
		names = append(names, time.Weekday(n).String())
	}
	return "Every " + list(names)
}

func monthNumber(s string) (int, bool) {
	for m := time.January; m <= time.December; m++ {
		if strings.EqualFold(s, m.String()[:3]) {
			return int(m), true
		}
	}
	return number(s, 1, 12)
}

// number reads a plain decimal within [lo, hi].
func number(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi && !strings.HasPrefix(s, "+")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// list joins "a", "b", "c" as "a, b and c".
func list(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// describeOnce says when a one-off fires, in its time zone.
func describeOnce(at time.Time) string {
	return "Once, on " + at.Format("Mon 2 Jan 2006 at 15:04")
}
