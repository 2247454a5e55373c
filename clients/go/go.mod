module idverify

go 1.19
