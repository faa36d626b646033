module deno-ccm/hack/hrobot_go_check

go 1.25.0

require github.com/syself/hrobot-go v0.2.7
