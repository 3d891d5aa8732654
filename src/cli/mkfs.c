/* mkfs.lanyfs -- placeholder until the formatter lands. */
int main(void)
{
    return 1;
}
