module pmv6.example/correctclient

go 1.19
