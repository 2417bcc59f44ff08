module svc.local/bench/pacer

go 1.24
