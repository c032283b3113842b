int idlc_dummy_emit_user(void); int idlc_dummy_emit_user(void){return 0;}
